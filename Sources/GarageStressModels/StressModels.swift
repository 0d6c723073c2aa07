// The types `garage-stress-worker` parks and the cross-process tests read: one definition, so
// that the worker's rows and the tests' reads can't drift apart (rows are keyed by type name).
import GarageLite

/// A document editors change and jobs upload (`garage-stress-worker … editor|job`);
/// `version` grows with every edit.
public struct StressDocument: Codable, Identifiable, Syncable, Sendable, Equatable {
    public var id: String
    public var version: Int
    public var body: String
    public var syncStatus: SyncStatus

    public init(id: String, version: Int, body: String, syncStatus: SyncStatus) {
        self.id = id
        self.version = version
        self.body = body
        self.syncStatus = syncStatus
    }
}

/// What the "server" store has of a `StressDocument`.
public struct StressUpload: Codable, Identifiable, Sendable, Equatable {
    public var id: String
    public var version: Int

    public init(id: String, version: Int) {
        self.id = id
        self.version = version
    }
}

/// A document of the sync-cycle test: editors change `version` and `body`, the server
/// `serverEdit`.
public struct SyncStressDocument: Codable, Identifiable, Syncable, Sendable, Equatable {
    public var id: String
    public var version: Int
    public var body: String
    public var serverEdit: Int
    public var syncStatus: SyncStatus

    public init(id: String, version: Int, body: String, serverEdit: Int, syncStatus: SyncStatus) {
        self.id = id
        self.version = version
        self.body = body
        self.serverEdit = serverEdit
        self.syncStatus = syncStatus
    }
}

/// The server's copy of a `SyncStressDocument`.
public struct SyncStressServerDocument: Codable, Identifiable, Sendable, Equatable {
    public var id: String
    public var version: Int
    public var body: String
    public var serverEdit: Int

    public init(id: String, version: Int, body: String, serverEdit: Int) {
        self.id = id
        self.version = version
        self.body = body
        self.serverEdit = serverEdit
    }
}

/// A document changed on the server that the downloader has not applied yet.
public struct SyncStressServerChange: Codable, Identifiable, Sendable {
    public var id: String

    public init(id: String) {
        self.id = id
    }
}

/// The settings namespace of the cross-process settings test (`garage-stress-worker … setting`).
public enum StressSettings: SettingsNamespace {
    public static let id = "stress"

    /// A key another process sets and removes.
    public static let greeting = SettingsKey<StressSettings, String>(id: "greeting", defaultValue: "none")
}

/// A note of the late-save test (`garage-stress-worker … late-editor|late-downloader|note`):
/// each edit appends a token no one else appends, so an edit that overwrote a newer version
/// shows as a token missing from the final note.
public struct StressNote: Codable, Identifiable, Syncable, Revisioned, Sendable, Equatable {
    public var id: String
    public var tokens: [String]
    public var syncStatus: SyncStatus
    public var revision: Int64 = 0

    public init(id: String, tokens: [String], syncStatus: SyncStatus = .notSynced) {
        self.id = id
        self.tokens = tokens
        self.syncStatus = syncStatus
    }
}

/// A notebook of `StressNote`s, parked with its notes as rows of their own.
public struct StressNotebook: Codable, Identifiable, Syncable, Revisioned, Sendable, Equatable {
    public var id: String
    public var title: String
    public var notes: [StressNote]
    public var syncStatus: SyncStatus
    public var revision: Int64 = 0

    public init(id: String, title: String, notes: [StressNote], syncStatus: SyncStatus = .notSynced) {
        self.id = id
        self.title = title
        self.notes = notes
        self.syncStatus = syncStatus
    }
}

/// A note of the sync server's chaos test (`garage-stress-worker … server-device`): in a team's
/// scope (`team`), and either private (`owner`: only that device writes it) or shared (any
/// device of the team writes it).
public struct ServerChaosNote: Codable, Identifiable, Syncable, Sendable, Equatable {
    public var id: String
    public var team: String
    public var title: String
    public var owner: String?
    public var syncStatus: SyncStatus

    public init(id: String, team: String, title: String, owner: String?, syncStatus: SyncStatus = .notSynced) {
        self.id = id
        self.team = team
        self.title = title
        self.owner = owner
        self.syncStatus = syncStatus
    }
}
