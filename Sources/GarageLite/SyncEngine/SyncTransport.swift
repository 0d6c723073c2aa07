import Foundation
import GarageLiteCore

/// The app's side of a ``SyncEngine``: how its objects reach the server, and how the server's
/// changes come back. Two calls, for every type the engine syncs.
///
/// The wire types are `Codable`, so that a transport can send them as they are, and a server
/// written in Swift can read them with the same types:
///
/// ```swift
/// struct NotesAPI: SyncTransport {
///     let base: URL
///     func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
///         try await post(base.appendingPathComponent("\(batch.typeName)/upload"), batch)
///     }
///     func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
///         try await post(base.appendingPathComponent("\(request.typeName)/changes"), request)
///     }
///     // post(_:_:) encodes the body as JSON, sends it, and decodes the answer: the whole
///     // transport over URLSession is in <doc:WritingASyncJob>.
/// }
/// ```
///
/// The engine keeps the server's version of each object (``ObjectMetadata/serverVersion``, an
/// opaque text the server chooses: a counter, a hash, a date) and sends with each change the
/// version it is based on, so that the server can tell an edit of its current version from one
/// of an older version (another device's edit came first): it answers the second with
/// ``UploadResult/conflict(_:version:)``, and the engine merges.
///
/// Throw from either call when the server can't be reached or answers with an error: the engine
/// gives the batch back as it was (an outage counts against no object), reports the error in its
/// ``SyncEngine/status``, and tries again after a backoff. Answer ``UploadResult/failed(_:)``
/// for one object the server refuses: that object is retried alone, and held after
/// ``Garage/maximumUploadAttempts`` refusals, while the rest of its batch syncs.
public protocol SyncTransport: Sendable {
    /// Sends a batch of changes and deletions of one type; returns the server's answer for each,
    /// by identifier. An identifier it doesn't answer for counts as failed.
    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object>
    /// Returns the changes and deletions of one type the server has after `request.cursor`.
    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object>
}

/// A ``SyncTransport`` that also hears the server say its feeds moved (a `SyncServer`'s live
/// route, which `HTTPSyncTransport` of `GarageLiteClient` reads): ``SyncEngine/run()`` then
/// downloads at once, rather than at its next poll, and polls only while it can't listen.
///
/// ```swift
/// struct NotesAPI: LiveSyncTransport {
///     // upload(_:) and download(_:), as for any transport, and:
///     func feedMoves(typeNames: [String]) async throws -> AsyncThrowingStream<Void, any Error> {
///         try await events.connect()      // yields once per "moved" the server sends
///     }
/// }
/// ```
///
/// A push is a hint, not the data: the engine downloads after its cursor when it hears one, and
/// once each time it connects (the changes made while it was not listening), so a push lost,
/// or a connection dropped and made again, misses nothing.
public protocol LiveSyncTransport: SyncTransport {
    /// Connects to the server's news of `typeNames`' feeds; returns once connected. The stream
    /// yields each time the server says a feed the device reads moved, and ends (or throws) when
    /// the connection drops: the engine then polls, and connects again after a backoff.
    /// Cancelling the task iterating the stream closes the connection.
    func feedMoves(typeNames: [String]) async throws -> AsyncThrowingStream<Void, any Error>
}

/// The server asked the device to wait before it asks again (HTTP `429 Too Many Requests`, or
/// `503 Service Unavailable` with a `Retry-After`): throw it from a transport's call, and
/// ``SyncEngine/run()`` waits ``retryAfter`` seconds, rather than its own backoff, before it
/// syncs again. Like any transport error it counts against no object.
public struct SyncServerBusy: Error, Sendable, CustomStringConvertible {
    /// How long the server asked the device to wait, in seconds.
    public var retryAfter: TimeInterval
    /// What the server said, for the status.
    public var message: String

    /// The server asked for a wait of `retryAfter` seconds.
    public init(retryAfter: TimeInterval, message: String = "") {
        self.retryAfter = retryAfter
        self.message = message
    }

    public var description: String {
        "the server is busy: it asked to wait \(Int(retryAfter.rounded(.up))) s" + (message.isEmpty ? "" : " (\(message))")
    }
}

/// One object's change, either way: its new version, or its deletion.
public struct SyncChange<Object: Codable>: Codable {
    /// The object's identifier (as ``ObjectKey/identifier``).
    public var identifier: String
    /// The object, as the app parked it (with its `Identifiable` children inside); `nil` when
    /// it was deleted.
    public var object: Object?
    /// Uploaded: the server's version the change is based on (`nil`: the server never had the
    /// object). Downloaded: the server's version of the change.
    public var version: String?

    /// Uploaded: which change of which device this is, the same each time the engine sends
    /// it again (after an answer lost, a crash): a server that keeps it answers a change it
    /// already took as taken, and can tell a device's change from another's (see
    /// ``SyncChangeID``). Downloaded: the change the server's version came from, when the
    /// server says (a `SyncServer` does): the engine doesn't take its own change back over a
    /// later local one (an edit over the deletion that followed it). `nil` otherwise.
    public var changeID: SyncChangeID?

    /// A change of the object `identifier`: its new value, or `nil` when deleted.
    public init(identifier: String, object: Object?, version: String?, changeID: SyncChangeID? = nil) {
        self.identifier = identifier
        self.object = object
        self.version = version
        self.changeID = changeID
    }
}

/// Which change of which device an uploaded ``SyncChange`` is: the device's identifier (one per
/// store, kept in its settings) and the object's revision on that device when the change was
/// sent. Sent again unchanged (an answer lost, a claim released), a change keeps its
/// identifier; an edit made meanwhile is a new change, with a higher revision.
///
/// A server that keeps, for each object, the change its current version came from can:
/// - answer a change it already took as taken (its answer was lost), rather than as a conflict
///   with itself;
/// - take a later change of the same device based on an older version (the device edited its
///   object again before the answer of its edit came back): the device has seen its own edit,
///   so the change is based on it, not on what was there before. A device never gets a
///   conflict against its own change.
public struct SyncChangeID: Codable, Sendable, Hashable, CustomStringConvertible {
    /// The device's identifier: a UUID, chosen once per store.
    public var device: String
    /// The object's revision on the device when the change was sent (higher: later).
    public var revision: Int64

    /// The change `revision` of the device `device`.
    public init(device: String, revision: Int64) {
        self.device = device
        self.revision = revision
    }

    /// `device/revision`.
    public var description: String { "\(device)/\(revision)" }

    /// Whether this change was made, on its device, after `earlier` (a change of the same
    /// device, at a lower revision, so that it includes it).
    public func follows(_ earlier: SyncChangeID) -> Bool {
        device == earlier.device && revision >= earlier.revision
    }
}

extension SyncChange: Sendable where Object: Sendable {}

/// Local changes of one type, for the server: see ``SyncTransport/upload(_:)``.
public struct UploadBatch<Object: Codable>: Codable {
    /// The stored type name of the objects (as ``ObjectKey/typeName``), for the server to tell
    /// types apart.
    public var typeName: String
    /// The objects edited or created since they last synced, oldest change first, then the
    /// objects deleted, each with the server's version it is based on.
    public var changes: [SyncChange<Object>]

    /// A batch of these changes.
    public init(typeName: String, changes: [SyncChange<Object>]) {
        self.typeName = typeName
        self.changes = changes
    }
}

extension UploadBatch: Sendable where Object: Sendable {}

/// The server's answer for one change of an ``UploadBatch``.
public enum UploadResult<Object: Codable>: Codable {
    /// Stored (or, for a deletion, deleted), as this version of the server's. A server that
    /// changes what it stores (a date it sets) sends the change with its next download.
    case accepted(version: String?)
    /// Not stored: the server's version is not the one the change was based on (another
    /// device's edit came first). Here is its version: the object, which the engine merges with
    /// the local version (``SyncMerge``) and uploads, based on `version`; or `nil` when the
    /// server deleted it: the local edit wins, and is uploaded again as based on `version` (the
    /// deletion's), which a server that keeps versions of its deletions then takes. A deletion
    /// answered `nil` was made on both sides: done.
    case conflict(Object?, version: String?)
    /// Stored as merged by the server with the version it was based on (a server that merges
    /// conflicts itself: `SyncRules.merge` of `GarageLiteServer`): the object as the server
    /// now has it, as `version`. The engine keeps it as the server's version of its upload (an
    /// edit made here meanwhile is merged with it), and reports the properties of its upload
    /// the merge holds otherwise (``SyncEngineReport/replaced``).
    case merged(Object, version: String?)
    /// Not stored, for this reason (invalid, too large): retried later, alone.
    case failed(String)

    private enum CodingKeys: String, CodingKey { case result, object, version, reason }

    /// Reads `{"result": "accepted" | "conflict" | "merged" | "failed", "object": …, "version": …, "reason": …}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decodeIfPresent(String.self, forKey: .version)
        switch try container.decode(String.self, forKey: .result) {
        case "accepted": self = .accepted(version: version)
        case "conflict": self = .conflict(try container.decodeIfPresent(Object.self, forKey: .object), version: version)
        case "merged": self = .merged(try container.decode(Object.self, forKey: .object), version: version)
        case "failed": self = .failed(try container.decodeIfPresent(String.self, forKey: .reason) ?? "failed")
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .result, in: container,
                                                   debugDescription: "unknown upload result \"\(other)\"")
        }
    }

    /// Writes the form ``init(from:)`` reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .accepted(let version):
            try container.encode("accepted", forKey: .result)
            try container.encodeIfPresent(version, forKey: .version)
        case .conflict(let object, let version):
            try container.encode("conflict", forKey: .result)
            try container.encodeIfPresent(object, forKey: .object)
            try container.encodeIfPresent(version, forKey: .version)
        case .merged(let object, let version):
            try container.encode("merged", forKey: .result)
            try container.encode(object, forKey: .object)
            try container.encodeIfPresent(version, forKey: .version)
        case .failed(let reason):
            try container.encode("failed", forKey: .result)
            try container.encode(reason, forKey: .reason)
        }
    }
}

extension UploadResult: Sendable where Object: Sendable {}

/// The server's answers to an ``UploadBatch``, by identifier.
public struct UploadResults<Object: Codable>: Codable {
    /// The answer for each identifier of the batch's changes.
    public var results: [String: UploadResult<Object>]

    /// Answers these results.
    public init(_ results: [String: UploadResult<Object>] = [:]) {
        self.results = results
    }

    /// The answer for `identifier`.
    public subscript(identifier: String) -> UploadResult<Object>? {
        get { results[identifier] }
        set { results[identifier] = newValue }
    }
}

extension UploadResults: Sendable where Object: Sendable {}

/// What a ``SyncEngine`` asks the server for: the changes of one type after a cursor.
public struct DownloadRequest<Object>: Codable, Sendable {
    /// The stored type name of the objects.
    public var typeName: String
    /// Where the last download ended, as the server said (``DownloadBatch/cursor``); `nil` for
    /// the first: everything.
    public var cursor: String?

    /// A request for the changes of `typeName` after `cursor`.
    public init(typeName: String, cursor: String?) {
        self.typeName = typeName
        self.cursor = cursor
    }

    private enum CodingKeys: String, CodingKey { case typeName, cursor }
}

/// The server's changes of one type after a cursor: see ``SyncTransport/download(_:)``.
public struct DownloadBatch<Object: Codable>: Codable {
    /// The objects created, changed or deleted on the server, each with its version, in the
    /// order the server applied them.
    public var changes: [SyncChange<Object>]
    /// Where this batch ends: the engine stores it, with the batch applied, and sends it with
    /// the next request; `nil` keeps the cursor the request had (a server with nothing new).
    public var cursor: String?
    /// Whether the server has more after `cursor`: the engine asks again at once.
    public var hasMore: Bool
    /// The request's cursor is too old: the server purged deletions after it (its tombstones
    /// end, a `SyncServer`'s `tombstoneHorizon`), so the device may have missed some. The
    /// engine then downloads everything again from no cursor, keeping its unsynced edits and
    /// deletions (uploaded after, merged as usual), and deletes the objects the server no
    /// longer sends. The batch's changes and cursor are ignored.
    public var rebase: Bool

    /// A batch of these changes; `rebase`: the request's cursor is too old (see ``rebase``).
    public init(changes: [SyncChange<Object>], cursor: String?, hasMore: Bool = false, rebase: Bool = false) {
        self.changes = changes
        self.cursor = cursor
        self.hasMore = hasMore
        self.rebase = rebase
    }

    private enum CodingKeys: String, CodingKey { case changes, cursor, hasMore, rebase }

    /// Reads `{"changes": […], "cursor": …, "hasMore": …, "rebase": …}`; a missing `rebase`
    /// (a server that never purges) is `false`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        changes = try container.decode([SyncChange<Object>].self, forKey: .changes)
        cursor = try container.decodeIfPresent(String.self, forKey: .cursor)
        hasMore = try container.decode(Bool.self, forKey: .hasMore)
        rebase = try container.decodeIfPresent(Bool.self, forKey: .rebase) ?? false
    }

    /// Writes the form ``init(from:)`` reads, `rebase` only when `true`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(changes, forKey: .changes)
        try container.encodeIfPresent(cursor, forKey: .cursor)
        try container.encode(hasMore, forKey: .hasMore)
        if rebase { try container.encode(true, forKey: .rebase) }
    }
}

extension DownloadBatch: Sendable where Object: Sendable {}
