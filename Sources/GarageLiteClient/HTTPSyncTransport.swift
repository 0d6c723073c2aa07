import Foundation
import GarageLite
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ready transport of a ``SyncEngine``: the protocol's two calls as JSON over HTTP to a
/// ``SyncServer``'s routes (`POST {server}/sync/{typeName}/upload` and `…/download`), with the
/// app's bearer token.
///
/// ```swift
/// let transport = HTTPSyncTransport(servers: [URL(string: "https://sync.example.com")!]) {
///     try await session.currentToken()      // nil: no Authorization header
/// }
/// let engine = SyncEngine(garage: garage, transport: transport, types: [.of(Note.self)])
/// ```
///
/// With several servers (the instances of one deployment), a call goes to the one that last
/// answered, and to the next in turn when it can't be reached: any instance serves any cursor.
/// An answer other than `200 OK` is thrown as ``HTTPSyncTransport/StatusError``, which the
/// engine counts as an outage (it gives the batch back and tries again after its backoff).
///
/// It uses Foundation's `URLSession`, on every platform the library supports, so that a device
/// app adds no networking package. A hand-written ``SyncTransport`` remains possible (see the
/// article on writing a sync job).
public struct HTTPSyncTransport: SyncTransport {
    /// The servers, tried in turn.
    public let servers: [URL]
    /// The routes' path under each server (the server's `addRoutes(to:path:)`).
    public let path: String
    private let token: @Sendable () async throws -> String?
    private let session: URLSession
    /// The index of the server that last answered.
    private let current = Protected(0)

    /// A transport to `servers` (tried in turn), under `path`, with the bearer token `token`
    /// returns for each request (`nil`: none). Its requests go through a session of its own with
    /// `session`'s configuration, without a URL cache: sync requests are never cached, and
    /// FoundationNetworking (Linux) crashes when a request of a session with a cache is cancelled
    /// while the cache is read ("Trying to access a behaviour for a task that in not in the
    /// registry": a device of the chaos test, stopping its engine).
    public init(servers: [URL], path: String = "sync", session: URLSession = .shared,
                token: @escaping @Sendable () async throws -> String? = { nil }) {
        precondition(!servers.isEmpty, "a transport needs a server")
        self.servers = servers
        self.path = path
        let configuration = (session.configuration.copy() as? URLSessionConfiguration) ?? .default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        self.session = URLSession(configuration: configuration)
        self.token = token
    }

    /// The server answered with another status than `200 OK`.
    public struct StatusError: Error, CustomStringConvertible, Sendable {
        /// The HTTP status.
        public let status: Int
        /// The server it came from.
        public let server: URL
        /// The answer's text (the server's reason).
        public let message: String

        public var description: String { "\(server) answered \(status): \(message)" }
    }

    public func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        try await post(batch, to: "\(batch.typeName)/upload")
    }

    public func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        try await post(request, to: "\(request.typeName)/download")
    }

    private func post<Answer: Decodable>(_ body: some Encodable, to route: String) async throws -> Answer {
        let data = try JSONEncoder().encode(body)
        let bearer = try await token()
        let first = current.read { $0 }
        var lastError: (any Error)?
        for offset in 0..<servers.count {
            let index = (first + offset) % servers.count
            var request = URLRequest(url: servers[index].appendingPathComponent(path).appendingPathComponent(route))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
            request.httpBody = data
            let answer: Data, response: URLResponse
            do {
                (answer, response) = try await send(request)
            } catch let error as URLError where Self.isUnreachable(error) {
                lastError = error       // this instance can't be reached: the next one
                continue
            }
            current.write { $0 = index }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            guard status == 200 else {
                throw StatusError(status: status, server: servers[index], message: String(decoding: answer.prefix(1_000), as: UTF8.self))
            }
            return try JSONDecoder().decode(Answer.self, from: answer)
        }
        throw lastError ?? URLError(.cannotConnectToHost)
    }

    /// `URLSession.data(for:)`, cancelled outside the cancellation handler. FoundationNetworking's
    /// own `data(for:)` (Linux) cancels its task inside the handler, under the Swift task's lock,
    /// and waits for the session's queue there; an answer completing at that moment holds the
    /// queue and waits for the lock: both wait forever (swift-corelibs-foundation #5412, seen
    /// here as an engine's `stop()` that never returned).
    private func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let pending = Protected<(task: URLSessionDataTask?, isCancelled: Bool)>((nil, false))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                let isCancelled = pending.write { state in
                    state.task = task
                    return state.isCancelled
                }
                task.resume()
                if isCancelled { task.cancel() }       // cancelled before it began: ends at once
            }
        } onCancel: {
            let task = pending.write { state in
                state.isCancelled = true
                return state.task
            }
            // Not here, under the task's lock: on a queue of its own.
            if let task { DispatchQueue.global().async { task.cancel() } }
        }
    }

    private static func isUnreachable(_ error: URLError) -> Bool {
        [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .networkConnectionLost, .timedOut, .notConnectedToInternet]
            .contains(error.code)
    }
}
