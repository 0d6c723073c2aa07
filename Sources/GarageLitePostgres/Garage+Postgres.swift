import Foundation
import GarageLite
import PostgresNIO

/// How a PostgreSQL garage uses its server.
public struct PostgresGarageOptions: Sendable {
    /// How long a write waits for another garage's write (any process, any machine) before it
    /// fails with ``GarageError/storeBusy(operation:path:)``: 10 seconds by default, as on SQLite.
    public var busyTimeout: TimeInterval = GarageEngine.defaultBusyTimeout
    /// The most connections the garage opens at once (reads run in parallel on them; writes
    /// take one at a time): 8 by default.
    public var maximumConnections = 8
    /// Whether opening a schema that doesn't exist creates the garage there (the default), or
    /// fails with ``GarageError/cannotOpenStore(path:reason:)``, as `Garage.readOnly(path:)`
    /// does for a missing file (the `garage` tool's commands that don't create a store).
    public var createsSchema = true

    /// The default options.
    public init() {}
}

extension GarageEngine {
    /// PostgreSQL: the garage in `schema` of the database `configuration` connects to, created
    /// when the schema doesn't exist (the database must), opened now.
    ///
    /// ```swift
    /// let configuration = PostgresConnection.Configuration(
    ///     host: "localhost", username: "app", password: secret, database: "app", tls: .disable)
    /// let garage = try Garage(engine: .postgres(configuration, schema: "garage"))
    /// ```
    ///
    /// - throws: ``GarageError/cannotOpenStore(path:reason:)`` when the server can't be reached
    ///   or the schema can't be created; ``GarageError/notAGarageStore(path:reason:)`` for a
    ///   schema with other tables; ``GarageError/newerFormatVersion(path:version:supportedVersion:)``
    ///   for one written by a newer GarageLite. A refused schema is left untouched.
    public static func postgres(_ configuration: PostgresConnection.Configuration, schema: String = "garage",
                                options: PostgresGarageOptions = PostgresGarageOptions()) throws -> GarageEngine {
        GarageEngine(try PostgresEngine.open(configuration: configuration, schema: schema, options: options))
    }

    /// PostgreSQL, at `url`: `postgres://user:password@host:port/database`, with the schema in a
    /// `schema` query item (`garage` without one) and TLS in `sslmode` (`disable`, `prefer`, the
    /// default, or `require`); a Unix socket's folder goes in a `host` query item, and how many
    /// seconds a connection may take to be made in `connect_timeout` (10 without it).
    ///
    /// ```swift
    /// let garage = try Garage(engine: .postgres(url: "postgres://app@localhost/app?schema=notes"))
    /// ```
    public static func postgres(url: String, options: PostgresGarageOptions = PostgresGarageOptions()) throws -> GarageEngine {
        let (configuration, schema) = try PostgresURL.parse(url)
        return try postgres(configuration, schema: schema, options: options)
    }

    /// The format version of the PostgreSQL schemas this version of GarageLite writes.
    public static var postgresFormatVersion: Int { PostgresSchema.formatVersion }
}

extension Garage {
    /// Opens the garage in `schema` of a PostgreSQL database (see ``GarageEngine/postgres(_:schema:options:)``).
    ///
    /// ```swift
    /// let garage = try Garage(postgres: configuration, schema: "garage")
    /// try garage.park(note)
    /// ```
    ///
    /// - parameter encryptionKey: The key the store is locked with, for an encrypted store.
    public convenience init(postgres configuration: PostgresConnection.Configuration, schema: String = "garage",
                            options: PostgresGarageOptions = PostgresGarageOptions(), encryptionKey: StoreKey? = nil) throws {
        try self.init(engine: .postgres(configuration, schema: schema, options: options), encryptionKey: encryptionKey)
    }

    /// Opens the garage a `postgres://` URL names (see ``GarageEngine/postgres(url:options:)``).
    public convenience init(postgresURL url: String, options: PostgresGarageOptions = PostgresGarageOptions(),
                            encryptionKey: StoreKey? = nil) throws {
        try self.init(engine: .postgres(url: url, options: options), encryptionKey: encryptionKey)
    }
}

/// `postgres://` URLs.
enum PostgresURL {
    /// Whether `text` is a PostgreSQL URL rather than a file path.
    static func isPostgres(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    static func parse(_ text: String) throws -> (PostgresConnection.Configuration, schema: String) {
        func refuse(_ reason: String) -> GarageError {
            .cannotOpenStore(path: redacted(text), reason: reason)
        }
        guard isPostgres(text), let components = URLComponents(string: text) else {
            throw refuse("it is not a postgres:// URL")
        }
        let items = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        let username = components.percentEncodedUser.flatMap { $0.removingPercentEncoding } ?? "postgres"
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        var database = String(components.path.drop(while: { $0 == "/" }))
        if database.isEmpty { database = username }
        let schema = items["schema"] ?? "garage"
        var configuration: PostgresConnection.Configuration
        if let socketFolder = items["host"], socketFolder.hasPrefix("/") {
            let port = components.port ?? 5432
            configuration = .init(unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: username,
                                  password: password, database: database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            switch items["sslmode"] ?? "prefer" {
            case "disable": tls = .disable
            case "prefer", "allow": tls = .prefer(try makeTLS(text))
            case "require", "verify-ca", "verify-full": tls = .require(try makeTLS(text))
            case let mode: throw refuse("its sslmode \(mode) is none of disable, prefer or require")
            }
            configuration = .init(host: components.host ?? "localhost", port: components.port ?? 5432,
                                  username: username, password: password, database: database, tls: tls)
        }
        // libpq's name: how many seconds a connection may take to be made (postgres-nio's
        // default, 10, without it); a server under load may need more.
        if let text = items["connect_timeout"] {
            guard let seconds = Int64(text), seconds > 0 else {
                throw refuse("its connect_timeout \(text) is not a positive number of seconds")
            }
            configuration.options.connectTimeout = .seconds(seconds)
        }
        return (configuration, schema)
    }

    private static func makeTLS(_ url: String) throws -> NIOSSLContext {
        do {
            return try NIOSSLContext(configuration: .makeClientConfiguration())
        } catch {
            throw GarageError.cannotOpenStore(path: redacted(url), reason: "TLS can't be set up: \(error)")
        }
    }

    /// `text` without its password, for errors.
    static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.password != nil else { return text }
        components.password = "***"
        return components.string ?? text
    }
}
