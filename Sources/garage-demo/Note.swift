import GarageLite

/// A note, as the phone, the laptop and the server store it. It has no field for the server's
/// version: each device's `SyncEngine` keeps that in the note's row.
struct Note: Codable, Identifiable, Syncable, Equatable, Sendable {
    var id: String
    var title: String
    var items: [String]
    var syncStatus: SyncStatus = .notSynced

    /// The note without what only one store says of it (its sync status): what the phone, the
    /// laptop and the server must agree on.
    var content: Note {
        var note = self
        note.syncStatus = .undetermined
        return note
    }
}

/// Version 2 of the app renamed `lines` to `items`: old notes read under the new name, without
/// a migration.
extension Note: LegacyKeyed {
    static let legacyKeys = ["items": ["lines"]]
}

/// A note as version 1 of the app stored it: its items were called `lines`. (Version 1's type,
/// kept here only to write what it wrote: an app has only the current one.)
struct NoteVersion1: Codable, Identifiable, Syncable, StoredTypeNamed {
    static let storedTypeName = "Note"
    static let sharesStoredTypeName = true
    var id: String
    var title: String
    var lines: [String]
    var syncStatus: SyncStatus = .notSynced
}
