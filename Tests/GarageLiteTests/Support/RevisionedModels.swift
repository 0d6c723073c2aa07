import Foundation
import GarageLite

/// A note that knows the revision it was retrieved at.
struct RNote: Codable, Identifiable, Hashable, Syncable, Revisioned, Sendable {
    var id: String
    var text: String
    var syncStatus: SyncStatus = .notSynced
    var revision: Int64 = 0
}

/// A notebook whose notes are parked as rows of their own.
struct RNotebook: Codable, Identifiable, Syncable, Revisioned, Sendable {
    var id: String
    var title: String
    var notes: [RNote]
    var syncStatus: SyncStatus = .notSynced
    var revision: Int64 = 0
}

/// A note without revisions, as GarageStorage apps have them.
struct PlainNote: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var text: String
    var syncStatus: SyncStatus = .notSynced
}

struct PlainNotebook: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var title: String
    var notes: [PlainNote]
    var syncStatus: SyncStatus = .notSynced
}

/// A Hashable (content-identified) object with a revision.
struct RTag: Codable, Hashable, Revisioned, Sendable {
    var name: String
    var revision: Int64 = 0
}

/// A view model's note: a class, edited in place.
final class NoteModel: Codable, Identifiable, Revisioned {
    var id: String
    var text: String
    var revision: Int64 = 0

    init(id: String, text: String) {
        self.id = id
        self.text = text
    }
}

final class NotebookModel: Codable, Identifiable, Revisioned {
    var id: String
    var title: String
    var notes: [NoteModel]
    var revision: Int64 = 0

    init(id: String, title: String, notes: [NoteModel]) {
        self.id = id
        self.title = title
        self.notes = notes
    }
}
