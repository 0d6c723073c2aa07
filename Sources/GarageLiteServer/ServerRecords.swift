import Foundation
import GarageLite

// What a sync server keeps in its garage beside the app's objects: each object's state (its
// version, scope and the change it came from), the feed of each scope (where each object last
// changed in it), and each scope's counter of positions. All three are `Revisioned`: a write
// based on a state another instance changed meanwhile is refused at commit (`staleObject`) and
// the server tries it again from the start, so that versions and positions never repeat.

/// The server's state of one object: stored as `SyncServer.ObjectState` under
/// `typeName␟identifier`.
struct ObjectState: Codable, Identifiable, Revisioned, Sendable, StoredTypeNamed {
    static let storedTypeName = "GarageLiteServer.ObjectState"

    var id: String
    var typeName: String
    var identifier: String
    /// The scope the object is in (its rules' answer for its last version).
    var scope: String
    /// The server's version: 1 at creation, one more at each change, its deletion included.
    var version: Int64
    /// Deleted: a tombstone in the feed until purged; the state itself stays, so that the
    /// object's versions go on from here if it is created again.
    var isDeleted: Bool
    /// The change its current version came from, when the device sent its identifier.
    var change: SyncChangeID?
    /// The current version is the server's merge of `change` with the version before it: not
    /// the device's own change, which a later change of that device doesn't follow.
    var isMerge: Bool? = nil
    var revision: Int64 = 0

    static func id(typeName: String, identifier: String) -> String { typeName + "\u{1F}" + identifier }
}

/// Where an object last changed in one scope's feed: a download of the scope after a position
/// below `position` sends it (its current version, or its deletion). An object that moved to
/// another scope has a deleted entry in the one it left.
struct FeedEntry: Codable, Identifiable, Revisioned, Sendable, StoredTypeNamed {
    static let storedTypeName = "GarageLiteServer.FeedEntry"

    var id: String
    var typeName: String
    var scope: String
    var identifier: String
    /// The scope's counter when the change committed: positions in a scope are taken one after
    /// the other, by commits that follow each other (the counter's revision orders them).
    var position: Int64
    var version: Int64
    /// Deleted, or moved out of this scope.
    var isDeleted: Bool
    /// When it was deleted (seconds since 1970), for the purge of tombstones past the horizon.
    var deletedAt: Double? = nil
    var revision: Int64 = 0

    static func id(typeName: String, scope: String, identifier: String) -> String {
        typeName + "\u{1F}" + scope + "\u{1F}" + identifier
    }
}

/// The last position taken in a scope's feed.
struct ScopeCounter: Codable, Identifiable, Revisioned, Sendable, StoredTypeNamed {
    static let storedTypeName = "GarageLiteServer.ScopeCounter"

    var id: String
    var position: Int64
    /// When the last position was taken (seconds since 1970): the feed lag an instance that
    /// hears of it measures.
    var movedAt: Double? = nil
    var revision: Int64 = 0
}

/// The content of one version of an object, kept for the types whose rules merge: the base of a
/// change based on it. Stored as `SyncServer.ObjectVersion` under `typeName␟identifier␟version`;
/// the server keeps an object's ``SyncServer/keptVersions`` latest, and none once it is deleted.
struct ObjectVersion: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "GarageLiteServer.ObjectVersion"

    var id: String
    /// The object, as JSON (Foundation's coders).
    var json: String

    static func id(typeName: String, identifier: String, version: Int64) -> String {
        typeName + "\u{1F}" + identifier + "\u{1F}" + String(version)
    }
}

/// The last position of a scope's feed whose tombstones were purged: a device whose cursor in
/// the scope is below it may have missed a deletion, and is answered "rebase".
struct ScopeHorizon: Codable, Identifiable, Revisioned, Sendable, StoredTypeNamed {
    static let storedTypeName = "GarageLiteServer.ScopeHorizon"

    var id: String
    var position: Int64
    var revision: Int64 = 0
}
