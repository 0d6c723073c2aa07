import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The PostgreSQL server the bench runs against, from a `postgres://` URL: what a Garage opens
/// (the URL with a `schema` item) and what the floor's postgres-nio connections connect to.
struct ServerAddress: Sendable {
    /// The URL as given, without a schema item.
    let url: String
    let configuration: PostgresConnection.Configuration

    /// Reads `url`: `postgres://user[:password]@host[:port]/database?sslmode=disable`, or a
    /// Unix socket's folder in a `host` query item. The floor connects without TLS only (the
    /// bench measures the statements, not the encryption of the wire).
    init(url: String) throws {
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://"), let components = URLComponents(string: url) else {
            throw BenchFailure("\(url) is not a postgres:// URL")
        }
        let items = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let username = components.percentEncodedUser.flatMap { $0.removingPercentEncoding } ?? "postgres"
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        var database = String(components.path.drop(while: { $0 == "/" }))
        if database.isEmpty { database = username }
        if let folder = items["host"], folder.hasPrefix("/") {
            configuration = .init(unixSocketPath: "\(folder)/.s.PGSQL.\(components.port ?? 5432)", username: username,
                                  password: password, database: database)
        } else {
            guard items["sslmode"] == "disable" else {
                throw BenchFailure("the floor connects without TLS: add sslmode=disable to \(url)")
            }
            configuration = .init(host: components.host ?? "localhost", port: components.port ?? 5432, username: username,
                                  password: password, database: database, tls: .disable)
        }
        var withoutSchema = components
        withoutSchema.queryItems = components.queryItems?.filter { $0.name != "schema" }
        self.url = withoutSchema.string ?? url
    }

    /// The URL of the garage in `schema`, for `Garage(postgresURL:)`.
    func garageURL(schema: String) -> String {
        url + (url.contains("?") ? "&" : "?") + "schema=\(schema)"
    }

    /// The same server reached through a relay on `port` of this machine (``CountingRelay``).
    func through(relayPort port: Int) throws -> ServerAddress {
        guard var components = URLComponents(string: url) else { throw BenchFailure("\(url) can't be rewritten") }
        components.host = "127.0.0.1"
        components.port = port
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "host" }
        guard let rewritten = components.string else { throw BenchFailure("\(url) can't be rewritten") }
        return try ServerAddress(url: rewritten)
    }

    /// Where the server listens, for the relay: a TCP address (the relay doesn't forward to a socket file).
    func socketAddress() throws -> SocketAddress {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty,
              !(components.queryItems ?? []).contains(where: { $0.name == "host" }) else {
            throw BenchFailure("counting round trips needs a TCP URL (host and port), not a Unix socket")
        }
        return try SocketAddress.makeAddressResolvingHost(host, port: components.port ?? 5432)
    }

    /// A new connection, with `search_path` set to `schema` when given (the floor's prepared
    /// statements name the table without its schema).
    func connect(schema: String? = nil) async throws -> PostgresConnection {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: quietLogger)
        if let schema {
            try await connection.query("SET search_path TO \(unescaped: schema)", logger: quietLogger)
        }
        return connection
    }
}

/// postgres-nio's logger for the bench: nowhere.
let quietLogger = Logger(label: "garage-bench-postgres", factory: { _ in SwiftLogNoOpLogHandler() })

/// The fresh schemas of one bench run: `gbp_<pid>_<n>`, each dropped when its workload ends.
struct Schemas {
    private let prefix = "gbp_\(ProcessInfo.processInfo.processIdentifier)_"
    private var next = 0

    mutating func fresh() -> String {
        next += 1
        return prefix + String(next)
    }
}

/// The bench's own connection: drops schemas and checks what the workloads left.
struct Admin: Sendable {
    let connection: PostgresConnection

    init(_ server: ServerAddress) async throws {
        connection = try await server.connect()
    }

    func drop(_ schema: String) async throws {
        try await connection.query("DROP SCHEMA IF EXISTS \(unescaped: schema) CASCADE", logger: quietLogger)
    }

    /// How many rows of `schema`'s object table have `syncStatus` and no claim.
    func count(in schema: String, status: Int) async throws -> Int {
        let rows = try await connection.query("""
            SELECT count(*) FROM \(unescaped: schema).garage_object WHERE sync_status = \(Int64(status)) AND claim IS NULL
            """, logger: quietLogger)
        for try await count in rows.decode(Int64.self) { return Int(count) }
        return 0
    }

    /// The server's version string (`SHOW server_version`).
    func serverVersion() async throws -> String {
        for try await version in try await connection.query("SHOW server_version", logger: quietLogger).decode(String.self) {
            return version
        }
        return "?"
    }

    /// The process of this connection's backend: its parent is the server's postmaster.
    func backendProcess() async throws -> Int32 {
        for try await pid in try await connection.query("SELECT pg_backend_pid()", logger: quietLogger).decode(Int32.self) {
            return pid
        }
        throw BenchFailure("pg_backend_pid() returned no row")
    }

    func close() async {
        try? await connection.close()
    }
}
