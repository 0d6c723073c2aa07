// Where the store a test names by path lives, in the test process and in the processes it
// starts (garage-stress-worker, garage-server): one rule, so that both sides open the same store.
import Crypto
import Foundation
import GarageLite
import GarageLitePostgres

/// The stores of the behaviour suite's engine, by path: the file at the path on SQLite; with
/// `GARAGE_TEST_ENGINE=postgres`, the schema of `GARAGE_POSTGRES_URL`'s database that the path
/// names (the same path, the same schema, in every process).
///
/// A child process inherits the test's environment, so a worker that opens its store with
/// ``open(path:busyTimeout:encryptionKey:)`` works on the store the test opened with
/// `TestEngine.garage(path:)`.
public enum TestStores {
    /// The PostgreSQL server the suite runs on, or `nil` when it runs on SQLite (or on the
    /// in-process reference engine, which other processes can't share).
    public static let postgresURL: String? = {
        let environment = ProcessInfo.processInfo.environment
        guard environment["GARAGE_TEST_ENGINE"] == "postgres", let url = environment["GARAGE_POSTGRES_URL"], !url.isEmpty
        else { return nil }
        return url
    }()

    /// The schema `path` names on PostgreSQL: `p_` and 24 hexadecimal digits of its hash.
    public static func schemaName(path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        return "p_" + SHA256.hash(data: Data(absolute.utf8)).map { String(format: "%02x", $0) }.joined().prefix(24)
    }

    /// `url` with its `schema` query item set to `schema`.
    public static func schemaURL(_ url: String, schema: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.queryItems = (components.queryItems ?? []).filter { $0.name != "schema" } + [URLQueryItem(name: "schema", value: schema)]
        return components.string ?? url
    }

    /// The store of `path` as a tool takes it (`garage`, `garage-server`): the path on SQLite,
    /// the schema's `postgres://` URL on PostgreSQL.
    public static func location(path: String) -> String {
        guard let url = postgresURL else { return path }
        return schemaURL(url, schema: schemaName(path: path))
    }

    /// Opens the store of `path` as a process of a test does: a garage of at most 2
    /// connections on PostgreSQL, since a test runs several processes at once.
    public static func open(path: String, busyTimeout: TimeInterval = 30, encryptionKey: StoreKey? = nil) throws -> Garage {
        guard let url = postgresURL else { return try Garage(path: path, busyTimeout: busyTimeout, encryptionKey: encryptionKey) }
        var options = PostgresGarageOptions()
        options.busyTimeout = busyTimeout
        options.maximumConnections = 2
        return try Garage(postgresURL: schemaURL(url, schema: schemaName(path: path)), options: options,
                          encryptionKey: encryptionKey)
    }
}
