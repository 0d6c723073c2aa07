#if canImport(JWTKit)
import _CryptoExtras
import Crypto
import Foundation
import GarageLiteServer
import JWTKit
import Testing

/// Issue 43: the server's tokens. A token is accepted only when its key signed it with that
/// key's algorithm, it names a subject, it has not expired (nor starts later), and its issuer,
/// audience and scopes are the expected ones; everything else is refused, and says why to the
/// server alone.
@Suite("Sync server: tokens", .firstPassOnly)
struct SyncTokensTests {
    static let secret = "a secret of at least thirty-two bytes, for HS256"

    static func hmacKeys(_ secret: String = secret) async -> JWTKeyCollection {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return keys
    }

    static func claims(_ subject: String = "ada", scopes: [String] = ["team:1"], expiring: TimeInterval = 3_600,
                       extra: [String: SyncJSON] = [:]) -> SyncTokenClaims {
        var all = extra
        all["scopes"] = .array(scopes.map(SyncJSON.string))
        return SyncTokenClaims(subject: subject, expiration: Date().addingTimeInterval(expiring), claims: all)
    }

    /// A token of `header` and `claims` (JSON texts) with `signature`, base64url-encoded.
    static func token(header: String, claims: String, signature: [UInt8] = []) -> String {
        [Data(header.utf8), Data(claims.utf8), Data(signature)].map(base64URL).joined(separator: ".")
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func parts(_ token: String) -> [String] { token.split(separator: ".", omittingEmptySubsequences: false).map(String.init) }

    @Test func anHS256TokenGrantsTheScopesItLists() async throws {
        let keys = await Self.hmacKeys()
        let tokens = SyncTokens(keys: keys)
        let token = try await keys.sign(Self.claims(scopes: ["team:1", "user:ada"]))
        let access = try await tokens.verify(token)
        #expect(access == SyncAccess(user: "ada", scopes: ["team:1", "user:ada"]))
        #expect(await tokens.access(authorization: "Bearer \(token)") == access)
        #expect(await tokens.access(authorization: "bearer \(token)") == access)
        for header in [nil, token, "Basic \(token)", "Bearer", "Bearer "] as [String?] {
            #expect(await tokens.access(authorization: header) == nil, "\(header ?? "nil")")
        }
        // OAuth's space-separated `scope`, and writable scopes of a claim of their own.
        let oauth = SyncTokens(keys: keys, scopeClaim: "scope", writableScopeClaim: "write")
        let both = try await keys.sign(Self.claims(extra: ["scope": .string("team:1 team:2"), "write": .array([.string("team:2"), .string("team:9")])]))
        #expect(try await oauth.verify(both) == SyncAccess(user: "ada", scopes: ["team:1", "team:2"], writableScopes: ["team:2"]))
        // The claims a tool signs for a user's scopes.
        let signed = try await keys.sign(SyncTokenClaims(subject: "bob", expiration: Date().addingTimeInterval(60), scopes: ["team:3"]))
        #expect(try await tokens.verify(signed) == SyncAccess(user: "bob", scopes: ["team:3"]))
    }

    @Test func forgedExpiredWrongKeyAndWrongAlgorithmTokensAreRefused() async throws {
        let keys = await Self.hmacKeys()
        let tokens = SyncTokens(keys: keys)
        let good = try await keys.sign(Self.claims())
        let parts = Self.parts(good)

        // Forged: the claims changed after signing (another scope), the signature kept.
        let forgedClaims = String(decoding: try JSONEncoder().encode(Self.claims(scopes: ["team:2"])), as: UTF8.self)
        let forged = [parts[0], Self.base64URL(Data(forgedClaims.utf8)), parts[2]].joined(separator: ".")
        await #expect(throws: SyncTokenError.signature) { _ = try await tokens.verify(forged) }

        // Signed with another secret.
        let other = try await Self.hmacKeys("another secret of at least thirty-two bytes").sign(Self.claims())
        await #expect(throws: SyncTokenError.signature) { _ = try await tokens.verify(other) }

        // Expired (beyond the leeway), or not valid yet.
        let expired = try await keys.sign(Self.claims(expiring: -120))
        await #expect(throws: SyncTokenError.expired) { _ = try await tokens.verify(expired) }
        let withinLeeway = try await keys.sign(Self.claims(expiring: -10))
        #expect(try await tokens.verify(withinLeeway).user == "ada")
        let later = try await keys.sign(Self.claims(extra: ["nbf": .integer(Int64(Date().timeIntervalSince1970) + 600)]))
        await #expect(throws: SyncTokenError.notYetValid) { _ = try await tokens.verify(later) }

        // `none`, however spelled, with or without a signature; and a header naming another algorithm.
        for algorithm in ["none", "None", "NONE"] {
            let unsigned = Self.token(header: #"{"alg":"\#(algorithm)","typ":"JWT"}"#, claims: forgedClaims)
            await #expect(throws: SyncTokenError.algorithm(algorithm)) { _ = try await tokens.verify(unsigned) }
            let withSignature = [Self.parts(unsigned)[0], Self.parts(unsigned)[1], parts[2]].joined(separator: ".")
            await #expect(throws: SyncTokenError.self) { _ = try await tokens.verify(withSignature) }
        }
        let renamed = [Self.base64URL(Data(#"{"alg":"HS512","typ":"JWT"}"#.utf8)), parts[1], parts[2]].joined(separator: ".")
        await #expect(throws: SyncTokenError.algorithm("HS512")) { _ = try await tokens.verify(renamed) }
        let noAlgorithm = [Self.base64URL(Data(#"{"typ":"JWT"}"#.utf8)), parts[1], parts[2]].joined(separator: ".")
        await #expect(throws: SyncTokenError.algorithm("")) { _ = try await tokens.verify(noAlgorithm) }

        // Not a JWT; no subject or no expiration; no scope granted.
        for text in ["", "a.b", "a.b.c.d", "....", "not a token", parts[0] + ".." + parts[2]] {
            await #expect(throws: SyncTokenError.self) { _ = try await tokens.verify(text) }
        }
        struct WithoutExpiration: JWTPayload {
            var sub = "ada"
            var scopes = ["team:1"]
            func verify(using algorithm: some JWTAlgorithm) async throws {}
        }
        let endless = try await keys.sign(WithoutExpiration())
        await #expect(throws: SyncTokenError.malformed) { _ = try await tokens.verify(endless) }
        let scopeless = try await keys.sign(Self.claims(scopes: []))
        await #expect(throws: SyncTokenError.noAccess) { _ = try await tokens.verify(scopeless) }

        // A server with no keys accepts nothing.
        await #expect(throws: SyncTokenError.noKey) { _ = try await SyncTokens(keys: JWTKeyCollection()).verify(good) }
    }

    @Test func issuerAndAudienceAreCheckedWhenExpected() async throws {
        let keys = await Self.hmacKeys()
        let tokens = SyncTokens(keys: keys, issuer: "https://auth.example.com", audience: "notes-sync")
        let right = try await keys.sign(Self.claims(extra: ["iss": .string("https://auth.example.com"),
                                                            "aud": .array([.string("other"), .string("notes-sync")])]))
        #expect(try await tokens.verify(right).user == "ada")
        let wrongIssuer = try await keys.sign(Self.claims(extra: ["iss": .string("https://evil.example.com"), "aud": .string("notes-sync")]))
        await #expect(throws: SyncTokenError.issuer) { _ = try await tokens.verify(wrongIssuer) }
        let wrongAudience = try await keys.sign(Self.claims(extra: ["iss": .string("https://auth.example.com"), "aud": .string("notes")]))
        await #expect(throws: SyncTokenError.audience) { _ = try await tokens.verify(wrongAudience) }
        let none = try await keys.sign(Self.claims())
        await #expect(throws: SyncTokenError.issuer) { _ = try await tokens.verify(none) }
    }

    @Test func publicKeysVerifyES256AndRS256TokensOfAKeySet() async throws {
        // The issuer signs with private keys; the server holds only their public keys.
        let ecKey = ES256PrivateKey()
        let rsaKey = try Insecure.RSA.PrivateKey(backing: _RSA.Signing.PrivateKey(keySize: .bits2048))
        let signer = JWTKeyCollection()
        await signer.add(ecdsa: ecKey, kid: "ec-1")
        await signer.add(rsa: rsaKey, digestAlgorithm: .sha256, kid: "rsa-1")

        let parameters = try #require(ecKey.publicKey.parameters)
        let (modulus, exponent) = try rsaKey.publicKey.getKeyPrimitives()
        let jwks = """
            {"keys": [
              {"kty": "EC", "crv": "P-256", "kid": "ec-1", "alg": "ES256", "x": "\(parameters.x)", "y": "\(parameters.y)"},
              {"kty": "RSA", "kid": "rsa-1", "alg": "RS256", "n": "\(Self.base64URL(modulus))", "e": "\(Self.base64URL(exponent))"}
            ]}
            """
        let verifier = JWTKeyCollection()
        try await verifier.add(jwksJSON: jwks)
        let tokens = SyncTokens(keys: verifier)
        let byEC = try await signer.sign(Self.claims(scopes: ["team:ec"]), kid: "ec-1")
        let byRSA = try await signer.sign(Self.claims(scopes: ["team:rsa"]), kid: "rsa-1")
        #expect(try await tokens.verify(byEC).scopes == ["team:ec"])
        #expect(try await tokens.verify(byRSA).scopes == ["team:rsa"])

        // The RSA key's public key used as an HMAC secret (the classic confusion): refused.
        let confused = JWTKeyCollection()
        await confused.add(hmac: HMACKey(from: Data(rsaKey.publicKey.pemRepresentation.utf8)), digestAlgorithm: .sha256, kid: "rsa-1")
        let hmacToken = try await confused.sign(Self.claims(scopes: ["team:rsa"]), kid: "rsa-1")
        await #expect(throws: SyncTokenError.algorithm("HS256")) { _ = try await tokens.verify(hmacToken) }
        // Another EC key under the set's kid: refused.
        let stranger = JWTKeyCollection()
        await stranger.add(ecdsa: ES256PrivateKey(), kid: "ec-1")
        let strangers = try await stranger.sign(Self.claims(), kid: "ec-1")
        await #expect(throws: SyncTokenError.signature) { _ = try await tokens.verify(strangers) }
    }
}
#endif
