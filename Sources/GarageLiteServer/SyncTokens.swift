#if canImport(JWTKit)
import Foundation
import JWTKit

/// Verifies the JSON Web Tokens that requests carry, and maps a verified token's claims to what
/// the request may read and write (``SyncAccess``).
///
/// The keys are jwt-kit's `JWTKeyCollection`: an HMAC secret (HS256), or public keys (RS256,
/// ES256…), one by one or as a key set (JWKS). A token is accepted only when
///
/// - it is signed by a key of the collection, with that key's algorithm (its header's `alg`
///   must name it: a token that says `none`, or names another algorithm, is refused);
/// - it has a subject (`sub`) and an expiration (`exp`) that has not passed, and its `nbf`, if
///   any, has (each within ``leeway``);
/// - its issuer (`iss`) and audience (`aud`) are the ones the server expects, when it expects
///   one;
/// - and the app's mapping grants it access.
///
/// Everything else is refused: a server with no keys accepts nothing.
///
/// ```swift
/// let keys = JWTKeyCollection()
/// await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
/// // Each token lists its scopes in a "scopes" claim: ["team:1", "user:ada"].
/// let tokens = SyncTokens(keys: keys, audience: "notes-sync")
/// server.addRoutes(to: router, tokens: tokens)
///
/// // Or scopes derived from claims of the app's own:
/// let tokens = SyncTokens(keys: keys) { claims in
///     SyncAccess(user: claims.subject, scopes: Set(claims.strings("teams").map { "team:\($0)" }))
/// }
/// ```
public struct SyncTokens: Sendable {
    /// The keys tokens are verified with.
    public let keys: JWTKeyCollection
    /// The issuer (`iss`) a token must name, or `nil` for any.
    public var issuer: String?
    /// The audience (`aud`) a token must include, or `nil` for any.
    public var audience: String?
    /// How far a clock may be off: a token is still accepted this long after its `exp`, and
    /// this long before its `nbf`.
    public var leeway: TimeInterval
    /// What a verified token may read and write, from its claims; `nil` refuses it.
    public var access: @Sendable (SyncTokenClaims) -> SyncAccess?

    /// Tokens verified with `keys`, whose claims `access` maps to what they may read and
    /// write (or `nil`: refused).
    public init(keys: JWTKeyCollection, issuer: String? = nil, audience: String? = nil, leeway: TimeInterval = 60,
                access: @escaping @Sendable (SyncTokenClaims) -> SyncAccess?) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.access = access
    }

    /// Tokens verified with `keys` that list the scopes they read in the claim `scopeClaim`
    /// (an array of strings, or one string of scopes separated by spaces, as OAuth's `scope`),
    /// and those they write in `writableScopeClaim` (by default, the same). A token without
    /// the claim, or with no scope in it, is refused.
    public init(keys: JWTKeyCollection, issuer: String? = nil, audience: String? = nil, leeway: TimeInterval = 60,
                scopeClaim: String = "scopes", writableScopeClaim: String? = nil) {
        self.init(keys: keys, issuer: issuer, audience: audience, leeway: leeway) { claims in
            let scopes = Set(claims.strings(scopeClaim))
            guard !scopes.isEmpty else { return nil }
            return SyncAccess(user: claims.subject, scopes: scopes,
                              writableScopes: writableScopeClaim.map { Set(claims.strings($0)).intersection(scopes) })
        }
    }

    /// What the request whose `Authorization` header is `authorization` may read and write, or
    /// `nil` when it carries no token these keys accept (``verify(_:)`` says why).
    public func access(authorization: String?) async -> SyncAccess? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return try? await verify(String(parts[1]))
    }

    /// What `token` may read and write.
    ///
    /// - throws: ``SyncTokenError`` naming why the token is refused.
    public func verify(_ token: String, now: Date = Date()) async throws -> SyncAccess {
        let header = try Self.header(of: token)
        guard let algorithm = header.alg, algorithm.lowercased() != "none" else { throw SyncTokenError.algorithm(header.alg ?? "") }
        let kid = header.kid.flatMap { JWKIdentifier(string: $0) }
        let key: any JWTAlgorithm
        do {
            key = try await keys.getKey(for: kid, alg: algorithm)
        } catch {
            throw SyncTokenError.noKey
        }
        // jwt-kit verifies with the key it finds, whatever algorithm the header names.
        guard key.name == algorithm else { throw SyncTokenError.algorithm(algorithm) }
        let claims: SyncTokenClaims
        do {
            claims = try await keys.verify(token, as: SyncTokenClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw SyncTokenError.signature
        } catch {
            throw SyncTokenError.malformed
        }
        guard now.timeIntervalSince(claims.expiration) < leeway else { throw SyncTokenError.expired }
        if let notBefore = claims.notBefore, notBefore.timeIntervalSince(now) > leeway { throw SyncTokenError.notYetValid }
        if let issuer, claims.issuer != issuer { throw SyncTokenError.issuer }
        if let audience, !claims.audience.contains(audience) { throw SyncTokenError.audience }
        guard let access = access(claims) else { throw SyncTokenError.noAccess }
        return access
    }

    private struct Header: Decodable {
        var alg: String?
        var kid: String?
    }

    private static func header(of token: String) throws -> Header {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, var text = parts.first.map(String.init) else { throw SyncTokenError.malformed }
        text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text), let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw SyncTokenError.malformed
        }
        return header
    }
}

/// Why a token is refused. The server answers each the same (`401`): these are for the
/// server's own tests and logs, never for the requester.
public enum SyncTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a JWT (three base64url parts, JSON header and claims with `sub` and `exp`).
    case malformed
    /// The header names `none`, no algorithm, or another algorithm than its key's.
    case algorithm(String)
    /// No key of the collection verifies tokens (or none of the header's `kid`).
    case noKey
    /// The signature is not the key's.
    case signature
    /// Its `exp` has passed.
    case expired
    /// Its `nbf` has not come yet.
    case notYetValid
    /// It names another issuer than the expected one.
    case issuer
    /// Its audience doesn't include the expected one.
    case audience
    /// The app's mapping of its claims grants it nothing.
    case noAccess

    public var description: String {
        switch self {
        case .malformed: return "The token is not a JWT with a subject and an expiration."
        case .algorithm(let name): return "The token's algorithm (\"\(name)\") is not its key's."
        case .noKey: return "No key verifies the token."
        case .signature: return "The token's signature is not its key's."
        case .expired: return "The token has expired."
        case .notYetValid: return "The token is not valid yet."
        case .issuer: return "The token names another issuer."
        case .audience: return "The token is for another audience."
        case .noAccess: return "The token's claims grant no scope."
        }
    }
}

/// The claims of a verified token: the registered ones the server checks, and every claim as
/// JSON, for the app's mapping to scopes.
public struct SyncTokenClaims: JWTPayload, Sendable {
    /// `sub`: who the token is for.
    public var subject: String
    /// `exp`: when it expires.
    public var expiration: Date
    /// `nbf`: when it starts to be valid, if it says.
    public var notBefore: Date?
    /// `iss`: who issued it, if it says.
    public var issuer: String?
    /// `aud`: whom it is for (one string or several).
    public var audience: [String]
    /// Every claim of the token, the registered ones included.
    public var claims: [String: SyncJSON]

    /// The strings of the claim `name`: its elements when it is an array of strings, the words
    /// of a string separated by spaces (OAuth's `scope`), or none.
    public func strings(_ name: String) -> [String] {
        switch claims[name] {
        case .string(let text)?: return text.split(separator: " ").map(String.init)
        case .array(let values)?: return values.compactMap { if case .string(let text) = $0 { text } else { nil } }
        default: return []
        }
    }

    public init(from decoder: any Decoder) throws {
        let claims = try decoder.singleValueContainer().decode([String: SyncJSON].self)
        guard case .string(let subject)? = claims["sub"], let expiration = claims["exp"]?.seconds else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a token needs \"sub\" and \"exp\""))
        }
        self.init(subject: subject, expiration: Date(timeIntervalSince1970: expiration), all: claims)
    }

    /// The claims `all`, whose `sub` and `exp` are `subject` and `expiration`: the registered
    /// claims the server checks read from them once.
    private init(subject: String, expiration: Date, all: [String: SyncJSON]) {
        self.subject = subject
        self.expiration = expiration
        self.claims = all
        notBefore = all["nbf"]?.seconds.map(Date.init(timeIntervalSince1970:))
        if case .string(let issuer)? = all["iss"] { self.issuer = issuer }
        audience = Self.audience(all["aud"])
    }

    /// `aud`: one string (a whole name, spaces and all), or an array of them.
    private static func audience(_ claim: SyncJSON?) -> [String] {
        switch claim {
        case .string(let one)?: return [one]
        case .array(let values)?: return values.compactMap { if case .string(let text) = $0 { text } else { nil } }
        default: return []
        }
    }

    /// The claims `claims` of a token for `subject` that expires at `expiration` (for signing
    /// tokens in tests and tools: `try await keys.sign(claims)`).
    public init(subject: String, expiration: Date, claims: [String: SyncJSON] = [:]) {
        let seconds = Int64(expiration.timeIntervalSince1970.rounded(.down))
        var all = claims
        all["sub"] = .string(subject)
        all["exp"] = .integer(seconds)
        self.init(subject: subject, expiration: Date(timeIntervalSince1970: Double(seconds)), all: all)
    }

    /// The claims of a token for `subject`, expiring at `expiration`, that grants `scopes` in
    /// the claim `scopeClaim` (the default ``SyncTokens`` reads), for signing tokens in tests
    /// and tools:
    ///
    /// ```swift
    /// let token = try await keys.sign(SyncTokenClaims(subject: "ada", expiration: .now + 3_600, scopes: ["team:1"]))
    /// ```
    public init(subject: String, expiration: Date, scopes: [String], scopeClaim: String = "scopes") {
        self.init(subject: subject, expiration: expiration, claims: [scopeClaim: .array(scopes.map(SyncJSON.string))])
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(claims)
    }

    /// Checked by ``SyncTokens/verify(_:now:)``, with its leeway and expectations.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

#endif
