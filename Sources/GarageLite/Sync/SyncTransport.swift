import Foundation

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
/// }
/// ```
///
/// Throw from either call when the server can't be reached or answers with an error: the engine
/// gives the batch back (its objects are uploaded again later), reports the error in its
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

/// Local changes of one type, for the server: see ``SyncTransport/upload(_:)``.
public struct UploadBatch<Object: Codable>: Codable {
    /// The stored type name of the objects (as ``ObjectKey/typeName``), for the server to tell
    /// types apart.
    public var typeName: String
    /// The objects edited or created since they last synced, oldest change first, as the app
    /// parked them (with their `Identifiable` children inside).
    public var objects: [Object]
    /// The identifiers of ``objects``, in the same order.
    public var identifiers: [String]
    /// The identifiers of the objects the app deleted: the server deletes them.
    public var deletions: [String]
    /// The version each of ``deletions`` deleted, as the app had it (`nil` when the store kept
    /// none): a server that keeps versions answers ``UploadResult/conflict(_:)`` with its own
    /// when the deletion was based on an older one (another device edited the object), and the
    /// edit wins.
    public var deletedVersions: [Object?]

    /// A batch of these changes.
    public init(typeName: String, objects: [Object], identifiers: [String], deletions: [String],
                deletedVersions: [Object?] = []) {
        self.typeName = typeName
        self.objects = objects
        self.identifiers = identifiers
        self.deletions = deletions
        self.deletedVersions = deletedVersions.isEmpty ? deletions.map { _ in nil } : deletedVersions
    }
}

extension UploadBatch: Sendable where Object: Sendable {}

/// The server's answer for one object of an ``UploadBatch``.
public enum UploadResult<Object: Codable>: Codable {
    /// Stored (or, for a deletion, deleted). With the server's copy when it differs from what was
    /// sent (a version, a date the server sets): the engine stores that copy, merged with any
    /// edit made during the upload.
    case accepted(Object?)
    /// Not stored: the server has a version the upload was not based on (another device's
    /// edit), here, or deleted the object (`nil`). The engine merges it with the local version
    /// (``SyncMerge``) and uploads the merge.
    case conflict(Object?)
    /// Not stored, for this reason (invalid, too large): retried later, alone.
    case failed(String)

    private enum CodingKeys: String, CodingKey { case result, object, reason }

    /// Reads `{"result": "accepted" | "conflict" | "failed", "object": …, "reason": …}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(String.self, forKey: .result) {
        case "accepted": self = .accepted(try container.decodeIfPresent(Object.self, forKey: .object))
        case "conflict": self = .conflict(try container.decodeIfPresent(Object.self, forKey: .object))
        case "failed": self = .failed(try container.decodeIfPresent(String.self, forKey: .reason) ?? "failed")
        case let other:
            throw DecodingError.dataCorruptedError(forKey: .result, in: container,
                                                   debugDescription: "unknown upload result \"\(other)\"")
        }
    }

    /// Writes `{"result": …, "object": …}` or `{"result": "failed", "reason": …}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .accepted(let object):
            try container.encode("accepted", forKey: .result)
            try container.encodeIfPresent(object, forKey: .object)
        case .conflict(let object):
            try container.encode("conflict", forKey: .result)
            try container.encodeIfPresent(object, forKey: .object)
        case .failed(let reason):
            try container.encode("failed", forKey: .result)
            try container.encode(reason, forKey: .reason)
        }
    }
}

extension UploadResult: Sendable where Object: Sendable {}

/// The server's answers to an ``UploadBatch``, by identifier.
public struct UploadResults<Object: Codable>: Codable {
    /// The answer for each identifier of the batch's objects and deletions.
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
    /// The objects created or changed on the server, in the order it applied them.
    public var objects: [Object]
    /// The identifiers of the objects deleted on the server.
    public var deletions: [String]
    /// Where this batch ends: the engine stores it, with the batch applied, and sends it with
    /// the next request.
    public var cursor: String
    /// Whether the server has more after `cursor`: the engine asks again at once.
    public var hasMore: Bool

    /// A batch of these changes.
    public init(objects: [Object], deletions: [String], cursor: String, hasMore: Bool = false) {
        self.objects = objects
        self.deletions = deletions
        self.cursor = cursor
        self.hasMore = hasMore
    }
}

extension DownloadBatch: Sendable where Object: Sendable {}
