// The server half: a SyncServer on the server's garage, mounted in a Hummingbird router behind
// JSON Web Tokens (the ServingSync article). Where Hummingbird and jwt-kit build: on Linux.

#if canImport(Hummingbird) && canImport(JWTKit)
// snippet.server
import GarageLite
import GarageLiteServer
import Hummingbird
import JWTKit

/// The app's model, from a package the app and the server both import: the same JSON both ways.
struct Note: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var teamID: String
    var title: String
    var items: [String] = []
    var syncStatus: SyncStatus = .notSynced
}

func notesServer(garage: Garage, secret: String) async throws -> some ApplicationProtocol {
    let server = SyncServer(garage: garage)      // on PostgreSQL, any number of instances
    try server.serve(Note.self, rules: SyncRules(scope: { "team:\($0.teamID)" }, validate: { access, note, stored in
        note?.title.isEmpty == true ? "a note needs a title" : nil      // refused: the device is told why
    }))
    let keys = JWTKeyCollection()
    await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
    let router = Router()
    server.addRoutes(to: router, tokens: SyncTokens(keys: keys))    // a token's "scopes": ["team:1", …]
    return Application(router: router, configuration: .init(address: .hostname("0.0.0.0", port: 8080)))
}
// snippet.end
#endif
