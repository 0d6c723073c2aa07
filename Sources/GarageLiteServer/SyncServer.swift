import CoreMetrics
import Foundation
import GarageLite

/// The server half of sync: answers the uploads and downloads of ``SyncEngine``s from a
/// `Garage` (on PostgreSQL for several instances, on SQLite for one), for the types it serves.
///
/// ```swift
/// let server = SyncServer(garage: try Garage(postgres: url, schema: "notes"))
/// server.serve(Note.self, rules: SyncRules(scope: { note in "team:\(note.teamID)" }))
/// // Hummingbird: server.addRoutes(to: router, authenticate: …)  (SyncServer+Routes.swift)
/// let answer = try await server.upload(batch, access: SyncAccess(user: "ada", scopes: ["team:1"]))
/// ```
///
/// For each object the server keeps its *version* (1 at creation, one more at each change, its
/// deletion included), the *scope* its rules put it in, and the change it last took
/// (``SyncChangeID``). A change based on the current version is taken; one based on an older
/// version is answered ``UploadResult/conflict(_:version:)`` with the server's copy (`nil` once
/// deleted), unless it is a later change of the device that made the current version (it has
/// seen it), or the very change that made it (its answer was lost): then it is taken, or
/// answered as taken. A device never gets a conflict against its own change.
///
/// A type whose rules merge (``SyncRules/merge``) has a change based on an older version merged
/// on the server instead, with the version it was based on (the server keeps each object's
/// ``keptVersions`` latest versions) and answered ``UploadResult/merged(_:version:)``.
///
/// Each scope has a *feed*: the objects in the order their last change committed, deletions
/// included. A download reads the feeds of the requester's scopes after its cursor. Positions in
/// a scope are taken one commit after the other (a counter each commit must find as it read it,
/// or start again), so that no change commits behind a position already handed out, whichever
/// instance took it: any instance serves any cursor.
public final class SyncServer: Sendable {
    /// The garage the server stores the objects and its state in.
    public let garage: Garage
    /// How many changes a download returns at most; the engine asks again for the rest.
    public let pageSize: Int

    /// How many of an object's latest versions the server keeps for a type whose rules merge:
    /// the bases of the changes based on them. A change based on an older version is merged
    /// without a base (each property the two sides hold otherwise was changed by both, and the
    /// merge's policy picks).
    public let keptVersions: Int
    /// What one instance takes on at once: beyond, its routes answer `429` or `503` with
    /// `Retry-After`.
    public let limits: Limits
    /// How long a deletion stays in its scope's feed before ``purgeTombstones(deletedBefore:batchSize:)``
    /// purges it, in seconds; `nil` (the default): forever. A device away longer rebases.
    public let tombstoneHorizon: TimeInterval?
    let served = ServedTypes()
    let live: LiveFeeds
    let metrics: SyncServerMetrics
    let requests = RequestsInProgress()
    /// The next pages of the downloads in progress, read before they are asked for.
    let readAhead = ReadAhead()

    /// How many times a change is tried again when another instance changed what it read.
    static let attempts = 20

    /// A server of the objects of `garage`, `pageSize` changes to a download, keeping the
    /// `keptVersions` latest versions of each object of a type whose rules merge, within
    /// `limits`, keeping tombstones `tombstoneHorizon` seconds (`nil`: forever), counting what
    /// it does to `metrics` (by default the process's `MetricsSystem`: see ``SyncServerMetrics``'s
    /// table in the server article).
    public init(garage: Garage, pageSize: Int = 500, keptVersions: Int = 16, limits: Limits = Limits(),
                tombstoneHorizon: TimeInterval? = nil, metrics: (any MetricsFactory)? = nil) {
        self.garage = garage
        self.metrics = SyncServerMetrics(given: metrics)
        live = LiveFeeds(metrics: self.metrics)
        self.tombstoneHorizon = tombstoneHorizon
        self.pageSize = max(1, pageSize)
        self.keptVersions = max(1, keptVersions)
        self.limits = limits
    }

    /// What one instance of a server takes on at once, so that one device, or one user's many,
    /// can't take the instance from the others: beyond, its routes answer before reading
    /// anything, with `Retry-After`, which the engine honours (``SyncServerBusy``).
    public struct Limits: Sendable {
        /// How many uploads and downloads one user (a token's subject) may have in progress on
        /// the instance; beyond, `429 Too Many Requests`.
        public var requestsPerUser = 16
        /// How many uploads and downloads the instance works on at once; beyond, `503`.
        public var requests = 512
        /// How many devices may listen to the instance's live news; beyond, `503`.
        public var listeners = 10_000
        /// The wait a refused request is asked for (`Retry-After`), in seconds.
        public var retryAfter: TimeInterval = 1
        /// How often a live connection gets a heartbeat (an event-stream comment), in seconds, at
        /// most 15: `HTTPSyncTransport` takes 45 seconds of silence for a dropped connection.
        public var heartbeat: TimeInterval = 15

        /// The defaults: 16 requests a user, 512 an instance, 10,000 listeners, a wait of 1 s.
        public init() {}
    }

    /// Serves the objects of `type`, under `rules`: from now on uploads and downloads of its
    /// stored type name are answered.
    ///
    /// - throws: the errors of a stored type name (another type holds it), and of the index
    ///   the feeds are read by (a store that can't be written).
    public func serve<Object: Codable & Identifiable & Sendable & SendableMetatype>(
        _ type: Object.Type, rules: SyncRules<Object>
    ) throws {
        let typeName = try garage.storedTypeName(Object.self)
        // Each download reads a scope's feed of a type after a position: in that index's order.
        try garage.index(FeedEntry.self, on: Field("typeName"), Field("scope"), Field("position"))
        served.add(typeName, ServedType(server: self, typeName: typeName, rules: rules, objects: .typed(garage, typeName: typeName)))
    }

    /// Serves the objects stored under `typeName` as records (``SyncRecord``), under `rules`:
    /// for a type the server has no Swift type for (`garage-server` serves each type it is
    /// given this way). Each object is one row, its nested objects inline; an object's `id`
    /// member, when it has one, must be the identifier it is uploaded under.
    ///
    /// - throws: ``SyncServerError/invalidTypeName(_:)`` for an empty name, or one with U+0000;
    ///   the errors of the index the feeds are read by.
    public func serveRecords(ofType typeName: String, rules: SyncRules<SyncRecord>) throws {
        guard !typeName.isEmpty, !typeName.unicodeScalars.contains("\u{0}") else { throw SyncServerError.invalidTypeName(typeName) }
        try garage.index(FeedEntry.self, on: Field("typeName"), Field("scope"), Field("position"))
        served.add(typeName, ServedType(server: self, typeName: typeName, rules: rules, objects: .records(garage, typeName: typeName)))
    }

    /// The stored type names the server serves.
    public var typeNames: [String] { served.names }

    /// Answers `batch`, the changes a device uploads, for a request granted `access`: each is
    /// taken, answered as taken (its answer was lost), answered with a conflict, or refused
    /// (outside `access`'s scopes, or by the type's rules).
    ///
    /// - throws: ``SyncServerError/notServed(typeName:)`` for a type the server doesn't serve; the
    ///   garage's errors (nothing of the failing change was written; the changes before it were).
    public func upload<Object: Codable & Sendable & SendableMetatype>(
        _ batch: UploadBatch<Object>, access: SyncAccess
    ) async throws -> UploadResults<Object> {
        try await servedType(Object.self, batch.typeName).upload(batch, access: access)
    }

    /// Answers `request` for a request granted `access`: the changes of its scopes' feeds after
    /// its cursor, at most ``pageSize``.
    ///
    /// - throws: ``SyncServerError/notServed(typeName:)``; the garage's errors.
    public func download<Object: Codable & Sendable & SendableMetatype>(
        _ request: DownloadRequest<Object>, access: SyncAccess
    ) async throws -> DownloadBatch<Object> {
        try await servedType(Object.self, request.typeName).download(request, access: access)
    }

    /// Answers an upload sent as JSON, for a transport: see ``upload(_:access:)``.
    public func upload(typeName: String, json: Data, access: SyncAccess) async throws -> Data {
        guard let type = served.type(typeName) else { throw SyncServerError.notServed(typeName: typeName) }
        return try await type.upload(json: json, access: access)
    }

    /// Answers a download request sent as JSON, for a transport: see ``download(_:access:)``.
    public func download(typeName: String, json: Data, access: SyncAccess) async throws -> Data {
        guard let type = served.type(typeName) else { throw SyncServerError.notServed(typeName: typeName) }
        return try await type.download(json: json, access: access)
    }

    private func servedType<Object>(_ type: Object.Type, _ typeName: String) throws -> ServedType<Object> {
        guard let served = served.type(typeName) as? ServedType<Object> else { throw SyncServerError.notServed(typeName: typeName) }
        return served
    }
}

/// What a ``SyncServer`` refuses before it reads anything.
public enum SyncServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No type of this stored name is served (or it is served as another Swift type).
    case notServed(typeName: String)
    /// A type name that can't name stored objects (empty, or holding U+0000).
    case invalidTypeName(String)

    public var description: String {
        switch self {
        case .notServed(let typeName): return "The server serves no type named \"\(typeName)\"."
        case .invalidTypeName(let typeName): return "\(typeName.debugDescription) can't name a stored type: give a name that is not empty and holds no U+0000."
        }
    }
}

/// What a request may read and write: the user its token names, and the scopes it grants.
///
/// A request reads the feeds of its ``scopes`` only: it never receives an object of another
/// scope, nor learns that one exists. It writes only objects whose scope (before and after
/// the change) is among ``writableScopes``.
public struct SyncAccess: Sendable, Hashable {
    /// Who asks (a token's subject), for the rules.
    public var user: String
    /// The scopes it reads.
    public var scopes: Set<String>
    /// The scopes it writes (by default, those it reads).
    public var writableScopes: Set<String>

    /// `user`, reading `scopes` and writing `writableScopes` (by default the same).
    public init(user: String, scopes: Set<String>, writableScopes: Set<String>? = nil) {
        self.user = user
        self.scopes = scopes
        self.writableScopes = writableScopes ?? scopes
    }
}

/// The app's rules for one type on the server: which scope an object is in, whether a request
/// may write a change, and who merges a conflict, in Swift, over the app's own model.
///
/// ```swift
/// SyncRules<Note>(scope: { "team:\($0.teamID)" }, validate: { access, note, stored in
///     if let note, note.title.count > 200 { return "a title has at most 200 characters" }
///     if let stored, stored.locked { return "the note is locked" }
///     return nil
/// }, merge: .fields(bothChanged: .lastWriterWins))
/// ```
public struct SyncRules<Object>: Sendable {
    /// The scope of an object: the feed it is in, and what a request must be granted to read or
    /// write it.
    public var scope: @Sendable (Object) -> String
    /// Why `access` may not write `change` (the new version; `nil`: a deletion) over `stored`
    /// (`nil`: a new object), or `nil` when it may. A refusal is answered
    /// ``UploadResult/failed(_:)`` with the reason, and nothing is written.
    public var validate: @Sendable (_ access: SyncAccess, _ change: Object?, _ stored: Object?) -> String?
    /// Who merges an edit based on an older version than the server's:
    /// - `nil` (the default): the device. The server answers ``UploadResult/conflict(_:version:)``
    ///   with its copy, and the device's engine merges with its own ``SyncMerge`` and uploads the
    ///   merge.
    /// - a merge: the server, at once, with the version the edit was based on as the base (kept
    ///   for ``SyncServer/keptVersions`` versions), the edit as the local side and its copy as
    ///   the downloaded one (so `.lastWriterWins` keeps the edit's value of a property both
    ///   changed). The merge is validated and written as the next version, and answered
    ///   ``UploadResult/merged(_:version:)``.
    ///
    /// Either way nothing is dropped unreported: the device whose upload a merge holds otherwise
    /// learns which properties (``SyncEngineReport/replaced``), whichever device that is. A
    /// deletion is never merged: it is answered as a conflict.
    public var merge: SyncMerge<Object>?

    /// Rules that put each object in `scope`'s scope, refuse what `validate` refuses (by
    /// default nothing beyond the scopes), and merge conflicts with `merge` on the server (by
    /// default the devices merge).
    public init(scope: @escaping @Sendable (Object) -> String,
                validate: @escaping @Sendable (_ access: SyncAccess, _ change: Object?, _ stored: Object?) -> String? = { _, _, _ in nil },
                merge: SyncMerge<Object>? = nil) {
        self.scope = scope
        self.validate = validate
        self.merge = merge
    }
}

/// The types a server serves, by stored type name.
final class ServedTypes: Sendable {
    private let types = Protected<[String: any ServedTypeProtocol]>([:])

    func add(_ typeName: String, _ type: any ServedTypeProtocol) { types.write { $0[typeName] = type } }
    func type(_ typeName: String) -> (any ServedTypeProtocol)? { types.read { $0[typeName] } }
    var names: [String] { types.read { $0.keys.sorted() } }
}

/// The requests an instance works on, in all and by user, against its limits.
final class RequestsInProgress: Sendable {
    enum Entry { case entered, tooManyForUser, tooMany }

    private struct State {
        var total = 0
        var byUser: [String: Int] = [:]
    }

    private let state = Protected(State())

    func enter(_ user: String, _ limits: SyncServer.Limits) -> Entry {
        state.write { state in
            if state.total >= limits.requests { return .tooMany }
            if state.byUser[user, default: 0] >= limits.requestsPerUser { return .tooManyForUser }
            state.total += 1
            state.byUser[user, default: 0] += 1
            return .entered
        }
    }

    func leave(_ user: String) {
        state.write { state in
            state.total -= 1
            let left = state.byUser[user, default: 1] - 1
            state.byUser[user] = left > 0 ? left : nil
        }
    }

    var count: Int { state.read(\.total) }
}
