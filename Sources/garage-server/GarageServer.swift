import ArgumentParser
import Foundation
import GarageLite
import GarageLitePostgres
import GarageLiteServer
#if canImport(Hummingbird) && canImport(JWTKit)
import Hummingbird
import JWTKit
import Logging
import Prometheus
import ServiceLifecycle
#endif

/// `garage-server`: serves a store's types to `SyncEngine`s as records, with no Swift code, for
/// teams whose server needs no rules in Swift: each object's scope is the value of one of its
/// members, and a request reads and writes the scopes its JSON Web Token lists.
///
///     garage-server --store notes.garage --type Note:team --token-key-file secret --port 8080
///
/// Every option may be given in the environment instead (`GARAGE_SERVER_STORE`,
/// `GARAGE_SERVER_TYPES` separated by commas, `GARAGE_SERVER_TOKEN_KEY`, `GARAGE_SERVER_JWKS`,
/// `GARAGE_SERVER_SCOPE_CLAIM`, `GARAGE_SERVER_ISSUER`, `GARAGE_SERVER_AUDIENCE`,
/// `GARAGE_SERVER_HOST`, `GARAGE_SERVER_PORT`); a flag wins over its variable.
@main
struct GarageServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "garage-server",
        abstract: "Serves a store's types to SyncEngines over HTTP, as records, behind JSON Web Tokens.",
        discussion: """
            Each --type NAME:MEMBER serves the objects stored under NAME; an object's scope is the \
            value of its MEMBER (a string or an integer). A --type NAME without a member puts every \
            object of NAME in the scope NAME. A request must carry a bearer token signed by the \
            --token-key-file secret (HS256) or a key of the --jwks key set (RS256, ES256, ...), with \
            "sub" and "exp", whose --scope-claim lists the scopes it reads and writes. Once it \
            listens, the server prints the address it serves on; SIGTERM or SIGINT stops it after \
            the requests in flight.
            """)

    @Option(help: ArgumentHelp("The store: a file, or a PostgreSQL garage's URL (postgres://user@host:port/database?schema=garage). Env: GARAGE_SERVER_STORE.", valueName: "store"))
    var store: String?

    @Option(name: .customLong("type"), help: ArgumentHelp("A type to serve, and the member that names each object's scope. Repeatable. Env: GARAGE_SERVER_TYPES (comma-separated).", valueName: "name[:member]"))
    var types: [String] = []

    @Option(help: ArgumentHelp("A file holding the HS256 secret tokens are signed with. Env: GARAGE_SERVER_TOKEN_KEY (the secret itself).", valueName: "path"))
    var tokenKeyFile: String?

    @Option(help: ArgumentHelp("A file holding a JSON Web Key Set whose keys verify tokens. Env: GARAGE_SERVER_JWKS (the path).", valueName: "path"))
    var jwks: String?

    @Option(help: ArgumentHelp("The token claim that lists the scopes (an array, or a string of scopes separated by spaces). Env: GARAGE_SERVER_SCOPE_CLAIM. Default: scopes.", valueName: "claim"))
    var scopeClaim: String?

    @Option(help: ArgumentHelp("The issuer (iss) tokens must name. Env: GARAGE_SERVER_ISSUER.", valueName: "issuer"))
    var issuer: String?

    @Option(help: ArgumentHelp("The audience (aud) tokens must include. Env: GARAGE_SERVER_AUDIENCE.", valueName: "audience"))
    var audience: String?

    @Option(help: ArgumentHelp("The address to listen on. Env: GARAGE_SERVER_HOST. Default: 127.0.0.1.", valueName: "host"))
    var host: String?

    @Option(help: ArgumentHelp("The port to listen on; 0 lets the system choose. Env: GARAGE_SERVER_PORT. Default: 8080.", valueName: "port"))
    var port: Int?

    @Option(help: "How many changes a download returns at most.")
    var pageSize: Int = 500

    @Option(help: ArgumentHelp("Who merges an edit based on an older version: devices (the server answers a conflict, the device merges), fields (the server merges property by property; a property both changed keeps the later upload's value) or fields-server-wins (the server's value). Env: GARAGE_SERVER_MERGE. Default: devices.", valueName: "merge"))
    var merge: String?

    @Option(help: ArgumentHelp("How long a deletion stays in its scope's feed, in seconds: the server purges older ones every quarter of it (at most hourly), and a device away longer downloads everything again, keeping its changes. Env: GARAGE_SERVER_TOMBSTONE_HORIZON. Default: forever.", valueName: "seconds"))
    var tombstoneHorizon: Double?

    @Option(help: ArgumentHelp("Where the Prometheus metrics are served, without credentials (an empty path: nowhere). Env: GARAGE_SERVER_METRICS_PATH. Default: metrics.", valueName: "path"))
    var metricsPath: String?

    @Option(help: ArgumentHelp("The lowest level logged (trace, debug, info, notice, warning, error, critical): refusals are notices, store failures errors; no log holds an object or a token. Env: GARAGE_SERVER_LOG_LEVEL. Default: notice.", valueName: "level"))
    var logLevel: String?

    /// The merge of `--merge`, or `nil` for the devices'.
    func serverMerge() throws -> SyncMerge<SyncRecord>? {
        switch value(merge, "GARAGE_SERVER_MERGE") ?? "devices" {
        case "devices": return nil
        case "fields": return .fields()
        case "fields-server-wins": return .fields(bothChanged: .serverWins)
        case let other: throw ValidationError("\(other.debugDescription) is not a merge: give devices, fields or fields-server-wins")
        }
    }

    /// The flag's value, or its environment variable's.
    private func value(_ flag: String?, _ variable: String) -> String? {
        flag ?? ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The types to serve: each name, and the member naming its objects' scopes (or `nil`).
    func servedTypes() throws -> [(name: String, member: String?)] {
        var specifications = types
        if specifications.isEmpty, let listed = value(nil, "GARAGE_SERVER_TYPES") {
            specifications = listed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        }
        guard !specifications.isEmpty else {
            throw ValidationError("give the types to serve: --type NAME:MEMBER (or GARAGE_SERVER_TYPES)")
        }
        return try specifications.map { specification in
            let parts = specification.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard !parts[0].isEmpty, parts.count == 1 || !parts[1].isEmpty else {
                throw ValidationError("\(specification.debugDescription) is not NAME or NAME:MEMBER")
            }
            return (parts[0], parts.count == 2 ? parts[1] : nil)
        }
    }

    /// The rules of a type served as records: the scope is the member's value.
    static func rules(typeName: String, member: String?, merge: SyncMerge<SyncRecord>?) -> SyncRules<SyncRecord> {
        guard let member else { return SyncRules(scope: { _ in typeName }, merge: merge) }
        return SyncRules(scope: { $0[member]?.text ?? "" }, validate: { _, record, _ in
            guard let record, record[member]?.text?.isEmpty ?? true else { return nil }
            return "its member \(member.debugDescription), which names its scope, is missing, empty or not a string or an integer"
        }, merge: merge)
    }

    func run() async throws {
        #if canImport(Hummingbird) && canImport(JWTKit)
        guard let store = value(store, "GARAGE_SERVER_STORE") else {
            throw ValidationError("give the store: --store PATH or URL (or GARAGE_SERVER_STORE)")
        }
        let served = try servedTypes()
        let merge = try serverMerge()
        let keys = JWTKeyCollection()
        var keyCount = 0
        if let secret = try tokenKeyFile.map({ try String(contentsOfFile: $0, encoding: .utf8) })
            ?? value(nil, "GARAGE_SERVER_TOKEN_KEY") {
            let trimmed = secret.trimmingCharacters(in: .whitespacesAndNewlines)
            guard trimmed.utf8.count >= 32 else {
                throw ValidationError("the HS256 secret has \(trimmed.utf8.count) bytes: give at least 32")
            }
            await keys.add(hmac: HMACKey(from: trimmed), digestAlgorithm: .sha256)
            keyCount += 1
        }
        if let path = value(jwks, "GARAGE_SERVER_JWKS") {
            try await keys.add(jwksJSON: try String(contentsOfFile: path, encoding: .utf8))
            keyCount += 1
        }
        guard keyCount > 0 else {
            throw ValidationError("give the keys tokens are verified with: --token-key-file or --jwks (a server with none would refuse every request)")
        }
        let garage: Garage
        if store.hasPrefix("postgres://") || store.hasPrefix("postgresql://") {
            garage = try Garage(postgresURL: store)
        } else {
            garage = try Garage(path: store)
        }
        let horizon = try tombstoneHorizon ?? value(nil, "GARAGE_SERVER_TOMBSTONE_HORIZON").map { text in
            guard let seconds = Double(text), seconds > 0 else { throw ValidationError("GARAGE_SERVER_TOMBSTONE_HORIZON is not a number of seconds: \(text)") }
            return seconds
        }
        if let horizon, horizon <= 0 { throw ValidationError("--tombstone-horizon must be a positive number of seconds") }
        let level = value(logLevel, "GARAGE_SERVER_LOG_LEVEL") ?? "notice"
        guard let logLevel = Logger.Level(rawValue: level) else {
            throw ValidationError("\(level.debugDescription) is not a log level: give trace, debug, info, notice, warning, error or critical")
        }
        let registry = PrometheusCollectorRegistry()
        let server = SyncServer(garage: garage, pageSize: pageSize, tombstoneHorizon: horizon,
                                metrics: PrometheusMetricsFactory(registry: registry))
        for type in served {
            try server.serveRecords(ofType: type.name, rules: Self.rules(typeName: type.name, member: type.member, merge: merge))
        }
        let tokens = SyncTokens(keys: keys, issuer: value(issuer, "GARAGE_SERVER_ISSUER"),
                                audience: value(audience, "GARAGE_SERVER_AUDIENCE"),
                                scopeClaim: value(scopeClaim, "GARAGE_SERVER_SCOPE_CLAIM") ?? "scopes")
        let router = Router()
        server.addRoutes(to: router, tokens: tokens)
        let metricsPath = value(metricsPath, "GARAGE_SERVER_METRICS_PATH") ?? "metrics"
        if !metricsPath.isEmpty { SyncServer.addMetricsRoute(to: router, path: metricsPath, registry: registry) }
        let host = value(host, "GARAGE_SERVER_HOST") ?? "127.0.0.1"
        let port = try port ?? value(nil, "GARAGE_SERVER_PORT").map { text in
            guard let port = Int(text) else { throw ValidationError("GARAGE_SERVER_PORT is not a port: \(text)") }
            return port
        } ?? 8080
        let description = served.map { type in type.member.map { "\(type.name) (scope: \($0))" } ?? type.name }
            .joined(separator: ", ")
        var app = Application(
            router: router, configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? port
                // Written at once (no buffer): a supervisor or a test waits for this line.
                FileHandle.standardOutput.write(Data("garage-server: serving \(description) on http://\(host):\(port)/sync\n".utf8))
            })
        app.logger.logLevel = logLevel
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: app)]
        if let horizon { services.append(.init(service: TombstonePurge(server: server, every: min(3600, horizon / 4), logger: app.logger))) }
        let group = ServiceGroup(configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger))
        try await group.run()
        #else
        throw ValidationError("garage-server runs where Hummingbird and jwt-kit build: on Linux")
        #endif
    }
}

#if canImport(Hummingbird)
/// Purges the tombstones past the server's horizon, every `interval` seconds, until the server
/// shuts down.
struct TombstonePurge: Service {
    let server: SyncServer
    let every: TimeInterval
    let logger: Logger

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let purged = try await server.purgeTombstones()
                    if purged > 0 { logger.info("purged tombstones past the horizon", metadata: ["count": .stringConvertible(purged)]) }
                } catch {
                    logger.error("the purge of tombstones failed; it runs again later", metadata: ["failure": .string("\(type(of: error))")])
                }
                try await Task.sleep(nanoseconds: UInt64(max(1, every) * 1_000_000_000))
            }
        }
    }
}
#endif
