#if canImport(Hummingbird)
import Foundation
import GarageLite
import Hummingbird

// The sync routes in an app's Hummingbird router: the protocol's two calls, for every type the
// server serves, behind the app's authentication.
extension SyncServer {
    /// Adds the sync routes to `router`, under `path`:
    ///
    /// - `POST /sync/{typeName}/upload`: an `UploadBatch`, answered with `UploadResults`;
    /// - `POST /sync/{typeName}/download`: a `DownloadRequest`, answered with a `DownloadBatch`.
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
    /// tries again later).
    public func addRoutes<Context: RequestContext>(
        to router: Router<Context>, path: String = "sync", maximumBodySize: Int = 64 << 20,
        authenticate: @escaping @Sendable (_ request: Request, _ context: Context) async throws -> SyncAccess?
    ) {
        let group = router.group(RouterPath(path))
        group.post("{typeName}/upload") { request, context -> Response in
            try await self.answer(request, context, maximumBodySize, authenticate) { typeName, json, access in
                try await self.upload(typeName: typeName, json: json, access: access)
            }
        }
        group.post("{typeName}/download") { request, context -> Response in
            try await self.answer(request, context, maximumBodySize, authenticate) { typeName, json, access in
                try await self.download(typeName: typeName, json: json, access: access)
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

    private func answer<Context: RequestContext>(
        _ request: Request, _ context: Context, _ maximumBodySize: Int,
        _ authenticate: @Sendable (Request, Context) async throws -> SyncAccess?,
        _ body: (String, Data, SyncAccess) async throws -> Data
    ) async throws -> Response {
        guard let access = try await authenticate(request, context) else {
            throw HTTPError(.unauthorized, message: "the request carries no credentials the server accepts")
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
        } catch is GarageError {
            // The store failed (busy, unreachable): nothing of the failing change was written. What
            // failed stays on the server (its store's names are none of the device's business).
            throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "1"], message: "the store failed: try again later")
        }
    }
}
#endif
