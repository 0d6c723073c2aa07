#if canImport(Hummingbird)
import Foundation
import GarageLite
import Hummingbird
import Logging
import ServiceLifecycle
#if canImport(Prometheus)
import Prometheus
#endif

// The sync routes in an app's Hummingbird router: the protocol's two calls, for every type the
// server serves, and the live news of the feeds, behind the app's authentication and the
// server's limits.
extension SyncServer {
    /// Adds the sync routes to `router`, under `path`:
    ///
    /// - `POST /sync/{typeName}/upload`: an `UploadBatch`, answered with `UploadResults`;
    /// - `POST /sync/{typeName}/download`: a `DownloadRequest`, answered with a `DownloadBatch`;
    /// - `GET /sync/live`: server-sent events (`text/event-stream`): `event: moved` each time a
    ///   feed the request reads moves (on any instance of the store), a comment every
    ///   ``Limits/heartbeat`` seconds, until the device disconnects or the server shuts down
    ///   gracefully (`HTTPSyncTransport` listens to it).
    ///
    /// Each request is first given to `authenticate`, which reads its credentials (a bearer
    /// token, say) and returns what it may read and write, or `nil`: then it is answered
    /// `401 Unauthorized` and nothing is read. There is no default: a server that trusts every
    /// request must say so (`{ _, _ in SyncAccess(user: "anyone", scopes: […]) }`).
    ///
    /// ```swift
    /// let router = Router()
    /// server.addRoutes(to: router) { request, _ in
    ///     guard let token = request.headers[.authorization] else { return nil }
    ///     return try await tokens.access(for: token)     // the app's verification
    /// }
    /// ```
    ///
    /// A type the server doesn't serve is answered `404`; a body that isn't the call's JSON,
    /// `400`; a body over `maximumBodySize` bytes, `413`; the store's failure, `503` (the engine
    /// tries again later). Beyond the server's ``SyncServer/limits``, a request is answered `429`
    /// (its user has too many in progress) or `503` (the instance has), with `Retry-After`, before
    /// anything is read: the engine waits that long.
    public func addRoutes<Context: RequestContext>(
        to router: Router<Context>, path: String = "sync", maximumBodySize: Int = 64 << 20,
        authenticate: @escaping @Sendable (_ request: Request, _ context: Context) async throws -> SyncAccess?
    ) {
        let group = router.group(RouterPath(path))
        group.post("{typeName}/upload") { request, context -> Response in
            try await self.answer("upload", request, context, maximumBodySize, authenticate) { typeName, json, access in
                try await self.upload(typeName: typeName, json: json, access: access)
            }
        }
        group.post("{typeName}/download") { request, context -> Response in
            try await self.answer("download", request, context, maximumBodySize, authenticate) { typeName, json, access in
                try await self.download(typeName: typeName, json: json, access: access)
            }
        }
        group.get("live") { request, context -> Response in
            try await self.counting("live", context) {
                guard let access = try await authenticate(request, context) else {
                    throw HTTPError(.unauthorized, message: "the request carries no credentials the server accepts")
                }
                return try self.liveResponse(access, context)
            }
        }
    }

#if canImport(JWTKit)
    /// Adds the sync routes to `router`, under `path`, for requests whose bearer token
    /// `tokens` accepts: see ``addRoutes(to:path:maximumBodySize:authenticate:)``.
    ///
    /// ```swift
    /// let keys = JWTKeyCollection()
    /// await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
    /// server.addRoutes(to: router, tokens: SyncTokens(keys: keys))
    /// ```
    public func addRoutes<Context: RequestContext>(
        to router: Router<Context>, path: String = "sync", maximumBodySize: Int = 64 << 20, tokens: SyncTokens
    ) {
        addRoutes(to: router, path: path, maximumBodySize: maximumBodySize) { request, _ in
            await tokens.access(authorization: request.headers[.authorization])
        }
    }
#endif

    /// Runs a route's `body`, and counts its answer (``SyncServerMetrics``): its status and
    /// time. Every answer names its request (`X-Request-ID`), as the server's logs do.
    private func counting<Context: RequestContext>(_ route: String, _ context: Context,
                                                   _ body: () async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        func record(_ status: Int) {
            metrics.request(route, status: status, seconds: Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        do {
            var response = try await body()
            response.headers[.init("X-Request-ID")!] = context.id
            record(response.status.code)
            return response
        } catch let error as HTTPError {
            record(error.status.code)
            var headers = error.headers
            headers[.init("X-Request-ID")!] = context.id
            throw HTTPError(error.status, headers: headers, message: error.body)
        } catch {
            record(500)
            throw error
        }
    }

    private func answer<Context: RequestContext>(
        _ route: String, _ request: Request, _ context: Context, _ maximumBodySize: Int,
        _ authenticate: @Sendable (Request, Context) async throws -> SyncAccess?,
        _ body: (String, Data, SyncAccess) async throws -> Data
    ) async throws -> Response {
        try await counting(route, context) {
            guard let access = try await authenticate(request, context) else {
                context.logger.info("refused: no credentials the server accepts", metadata: ["route": .string(route)])
                throw HTTPError(.unauthorized, message: "the request carries no credentials the server accepts")
            }
            let retryAfter = String(Int(limits.retryAfter.rounded(.up)))
            let entry = requests.enter(access.user, limits)
            metrics.inProgress(requests.count)
            metrics.pool(garage.connectionPoolUse)
            switch entry {
            case .tooManyForUser:
                metrics.refused("user")
                context.logger.notice("refused: the user's requests in progress are at the limit", metadata: ["route": .string(route)])
                throw HTTPError(.tooManyRequests, headers: [.retryAfter: retryAfter],
                                message: "this user has \(limits.requestsPerUser) requests in progress: wait, then try again")
            case .tooMany:
                metrics.refused("instance")
                context.logger.notice("refused: the instance's requests in progress are at the limit", metadata: ["route": .string(route)])
                throw HTTPError(.serviceUnavailable, headers: [.retryAfter: retryAfter],
                                message: "this instance has \(limits.requests) requests in progress: wait, then try again")
            case .entered:
                break
            }
            defer {
                requests.leave(access.user)
                metrics.inProgress(requests.count)
                metrics.pool(garage.connectionPoolUse)
            }
            let typeName = context.parameters.get("typeName") ?? ""
            let buffer: ByteBuffer
            do {
                buffer = try await request.body.collect(upTo: maximumBodySize)
            } catch {
                throw HTTPError(.contentTooLarge, message: "the body is over \(maximumBodySize) bytes: send smaller batches")
            }
            do {
                let answer = try await body(typeName, Data(buffer.readableBytesView), access)
                return Response(status: .ok, headers: [.contentType: "application/json"],
                                body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer)))
            } catch SyncServerError.notServed(let typeName) {
                throw HTTPError(.notFound, message: "this server serves no type named \(typeName)")
            } catch is DecodingError {
                throw HTTPError(.badRequest, message: "the body is not this call's JSON for \(typeName)")
            } catch let error as GarageError {
                // The store failed (busy, unreachable): nothing of the failing change was written. What
                // failed stays on the server (its store's names are none of the device's business),
                // and its log names the kind of failure, not the objects.
                context.logger.error("the store failed", metadata: ["route": .string(route), "type": .string(typeName),
                                                                    "failure": .string(error.kind)])
                throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"], message: "the store failed: try again later")
            }
        }
    }

#if canImport(Prometheus)
    /// Adds `GET /{path}` to `router`: the metrics of `registry` in Prometheus's text format, for
    /// a server whose metrics go to a `PrometheusMetricsFactory` of it (see ``SyncServerMetrics``).
    ///
    /// ```swift
    /// let registry = PrometheusCollectorRegistry()
    /// MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    /// SyncServer.addMetricsRoute(to: router, registry: registry)
    /// ```
    ///
    /// It reads no credentials: serve it where only the operator's scraper reaches it.
    public static func addMetricsRoute<Context: RequestContext>(to router: Router<Context>, path: String = "metrics",
                                                                registry: PrometheusCollectorRegistry) {
        router.get(RouterPath(path)) { _, _ -> Response in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                     body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
        }
    }
#endif

    /// The live route's answer: server-sent events, `event: moved` for each news of the feeds
    /// `access` reads, a comment as heartbeat, until the device goes or the server shuts down.
    private func liveResponse<Context: RequestContext>(_ access: SyncAccess, _ context: Context) throws -> Response {
        guard listeners < limits.listeners else {
            metrics.refused("listeners")
            context.logger.notice("refused: the instance's listeners are at the limit")
            throw HTTPError(.serviceUnavailable, headers: [.retryAfter: String(Int(limits.retryAfter.rounded(.up)))],
                            message: "this instance has \(limits.listeners) listeners: wait, then try again")
        }
        // At most 15 s: HTTPSyncTransport takes 45 s of silence for a dropped connection.
        let heartbeat = min(15, max(0.01, limits.heartbeat))
        let body = ResponseBody { writer in
            // Subscribed here, once the answer is being written: an answer never written holds no
            // listener.
            let moves = self.feedMoves(access: access)
            let (events, continuation) = AsyncStream<String>.makeStream()
            let pump = Task {
                for await _ in moves { continuation.yield("event: moved\ndata: {}\n\n") }
                continuation.finish()
            }
            let beat = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(nanoseconds: UInt64(heartbeat * 1_000_000_000))
                    continuation.yield(": heartbeat\n\n")
                }
            }
            defer {
                pump.cancel()
                beat.cancel()
            }
            // Told at once: the device downloads what moved before it listened.
            try await writer.write(ByteBuffer(string: ": listening\n\n"))
            try await withGracefulShutdownHandler {
                for await event in events { try await writer.write(ByteBuffer(string: event)) }
            } onGracefulShutdown: {
                continuation.finish()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }
}
#endif

extension GarageError {
    /// The case's name ("storeBusy"), for a log that must not hold identifiers or content.
    var kind: String {
        String(String(describing: self).prefix { $0 != "(" })
    }
}
