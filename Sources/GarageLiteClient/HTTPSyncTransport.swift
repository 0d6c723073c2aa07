import Foundation
import GarageLite
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The ready transport of a ``SyncEngine``: the protocol's two calls as JSON over HTTP to a
/// ``SyncServer``'s routes (`POST {server}/sync/{typeName}/upload` and `…/download`), with the
/// app's bearer token, and the server's live news (`GET {server}/sync/live`, server-sent
/// events), which ``SyncEngine/run()`` listens to: it downloads as soon as a feed moves.
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
/// engine counts as an outage (it gives the batch back and tries again after its backoff); a
/// `429`, or a `503` with `Retry-After`, as ``SyncServerBusy``: the engine waits as long as the
/// server asked.
///
/// It uses Foundation's `URLSession`, on every platform the library supports, so that a device
/// app adds no networking package. A hand-written ``SyncTransport`` remains possible (see the
/// article on writing a sync job).
public struct HTTPSyncTransport: LiveSyncTransport {
    /// The servers, tried in turn.
    public let servers: [URL]
    /// The routes' path under each server (the server's `addRoutes(to:path:)`).
    public let path: String
    private let token: @Sendable () async throws -> String?
    private let session: URLSession
    private let configuration: URLSessionConfiguration
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
        self.configuration = configuration
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
        let (server, answer, response) = try await firstReachable { server in
            var request = URLRequest(url: server.appendingPathComponent(path).appendingPathComponent(route))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
            request.httpBody = data
            let (answer, response) = try await send(request)
            return (server, answer, response)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            throw Self.error(response, server: server, message: String(decoding: answer.prefix(1_000), as: UTF8.self))
        }
        return try JSONDecoder().decode(Answer.self, from: answer)
    }

    /// `call` made to the server that last answered, then to the next in turn while one can't
    /// be reached; the one that answered is the first of the next call.
    private func firstReachable<Result>(_ call: (URL) async throws -> Result) async throws -> Result {
        let first = current.read { $0 }
        var lastError: (any Error)?
        for offset in 0..<servers.count {
            let index = (first + offset) % servers.count
            do {
                let result = try await call(servers[index])
                current.write { $0 = index }
                return result
            } catch let error as URLError where Self.isUnreachable(error) {
                lastError = error       // this instance can't be reached: the next one
            }
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

    /// The error an answer other than `200 OK` is thrown as: ``SyncServerBusy`` for a `429`, or
    /// a `503` with `Retry-After` (in seconds); ``StatusError`` otherwise.
    static func error(_ response: URLResponse, server: URL, message: String) -> any Error {
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        let retryAfter = (http?.value(forHTTPHeaderField: "Retry-After")).flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) }
        if status == 429 || (status == 503 && retryAfter != nil) {
            return SyncServerBusy(retryAfter: retryAfter ?? 1, message: "\(server) answered \(status): \(message)")
        }
        return StatusError(status: status, server: server, message: message)
    }

    /// Connects to the live news of the first server that can be reached (see
    /// ``LiveSyncTransport/feedMoves(typeNames:)``): the stream yields for each `moved` event,
    /// and throws when the connection drops or stays silent for three of the server's
    /// heartbeats (45 seconds).
    public func feedMoves(typeNames: [String]) async throws -> AsyncThrowingStream<Void, any Error> {
        let bearer = try await token()
        return try await firstReachable { server in
            var request = URLRequest(url: server.appendingPathComponent(path).appendingPathComponent("live"))
            request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
            if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
            request.timeoutInterval = 45
            return try await EventStream.open(request, server: server, configuration: configuration)
        }
    }

    private static func isUnreachable(_ error: URLError) -> Bool {
        [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .networkConnectionLost, .timedOut, .notConnectedToInternet]
            .contains(error.code)
    }
}

/// One live connection: a request whose answer is read as it arrives (server-sent events), its
/// `moved` events yielded to a stream. It is the delegate of a session of its own, which
/// releases it once the request ends.
final class EventStream: NSObject, URLSessionDataDelegate, Sendable {
    private struct State {
        var opened: CheckedContinuation<Void, any Error>?
        var events: AsyncThrowingStream<Void, any Error>.Continuation?
        var buffer: [UInt8] = []
        var refusal: (any Error)?
        /// How the request ended, once it did (before `opened` was set, when cancelled at once).
        var ended: (any Error)?
    }

    private let state = Protected(State())
    private let server: URL

    private init(server: URL) {
        self.server = server
    }

    /// Sends `request`, and returns once the server answered `200 OK` with an event stream.
    static func open(_ request: URLRequest, server: URL, configuration: URLSessionConfiguration) async throws
        -> AsyncThrowingStream<Void, any Error>
    {
        let delegate = EventStream(server: server)
        let (events, continuation) = AsyncThrowingStream<Void, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        delegate.state.write { $0.events = continuation }
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        let task = session.dataTask(with: request)
        // Cancelled from a queue of its own, never under a lock of the caller's (see `send`).
        continuation.onTermination = { _ in DispatchQueue.global().async { task.cancel() } }
        defer { session.finishTasksAndInvalidate() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (opened: CheckedContinuation<Void, any Error>) in
                let ended = delegate.state.write { state -> (any Error)? in
                    if state.ended == nil { state.opened = opened }
                    return state.ended
                }
                if let ended { opened.resume(throwing: ended) } else { task.resume() }
            }
        } onCancel: {
            DispatchQueue.global().async { task.cancel() }
        }
        return events
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            state.write { $0.refusal = HTTPSyncTransport.error(response, server: server, message: "the live route refused the request") }
            completionHandler(.cancel)
            return
        }
        let opened = state.write { state -> CheckedContinuation<Void, any Error>? in
            defer { state.opened = nil }
            return state.opened
        }
        opened?.resume()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (moves, events) = state.write { state -> (Int, AsyncThrowingStream<Void, any Error>.Continuation?) in
            state.buffer.append(contentsOf: data)
            var moves = 0
            // Events end with an empty line; "\r\n" line ends are read as "\n".
            state.buffer.removeAll { $0 == UInt8(ascii: "\r") }
            while let end = Self.endOfEvent(in: state.buffer) {
                let event = String(decoding: state.buffer[..<end], as: UTF8.self)
                state.buffer.removeSubrange(..<(end + 2))
                if event.split(separator: "\n").contains(where: { $0 == "event: moved" || $0 == "event:moved" }) { moves += 1 }
            }
            return (moves, state.events)
        }
        if moves > 0 { events?.yield() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let failure = state.read(\.refusal) ?? error ?? URLError(.networkConnectionLost)
        let (opened, events) = state.write { state in
            defer {
                state.opened = nil
                state.events = nil
                state.ended = failure
            }
            return (state.opened, state.events)
        }
        opened?.resume(throwing: failure)
        events?.finish(throwing: failure)
    }

    /// Where the first event of `buffer` ends: the index of its blank line's first "\n".
    private static func endOfEvent(in buffer: [UInt8]) -> Int? {
        guard buffer.count >= 2 else { return nil }
        for index in 0..<(buffer.count - 1) where buffer[index] == 10 && buffer[index + 1] == 10 { return index }
        return nil
    }
}
