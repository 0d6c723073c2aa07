import Foundation
@testable import GarageLite
import GarageLitePostgres
import GarageStressModels
import Testing

/// The engine the behaviour suite runs on: SQLite, or, with `GARAGE_TEST_ENGINE=postgres`, the
/// PostgreSQL server `GARAGE_POSTGRES_URL` names (`.ci/run` starts one and runs the suite on both).
///
/// The suite's garages come from here (`TestEngine.garage()` where a test wants a new, empty
/// store), so that the same tests hold both engines to the same behaviour. Tests of what only
/// one engine has (SQLite's files, PostgreSQL's server) open their engine themselves.
enum TestEngine {
    /// The URL of the PostgreSQL server of the tests, if there is one.
    static let postgresURL: String? = {
        let url = ProcessInfo.processInfo.environment["GARAGE_POSTGRES_URL"] ?? ""
        return url.isEmpty ? nil : url
    }()

    /// Whether the behaviour suite runs on PostgreSQL.
    static let isPostgres: Bool = {
        guard ProcessInfo.processInfo.environment["GARAGE_TEST_ENGINE"] == "postgres" else { return false }
        precondition(postgresURL != nil, "GARAGE_TEST_ENGINE=postgres needs GARAGE_POSTGRES_URL")
        return true
    }()

    /// Whether the garages of ``garage(path:busyTimeout:encryptionKey:)`` keep their store in the
    /// file at the path (SQLite's), which a test may read: not on PostgreSQL, nor on the
    /// reference engine, which keeps it in memory.
    static var hasFiles: Bool { !isPostgres && !isReference }

    /// Whether the behaviour suite runs on the reference engine (`GARAGE_TEST_ENGINE=reference`):
    /// the boundary's primitives only, every other statement its default (``ReferenceEngine``).
    static let isReference = ProcessInfo.processInfo.environment["GARAGE_TEST_ENGINE"] == "reference"

    /// The reference engine's stores by path: the same path, the same store.
    private static let referenceStores = Protected([String: ReferenceEngine.Store]())

    /// A new, empty garage on the reference engine (``ReferenceEngine``: the boundary's
    /// primitives only), which tests of a rule run beside the test engine's.
    static func referenceGarage(encryptionKey: StoreKey? = nil) throws -> Garage {
        try Garage(engine: GarageEngine(ReferenceEngine()), encryptionKey: encryptionKey)
    }

    /// The engines a test of a rule runs on, as whether each is the reference engine: the test
    /// engine, and the reference engine in the first pass (the PostgreSQL pass would only run
    /// it again).
    static let onReference: [Bool] = isPostgres || isReference ? [false] : [false, true]

    /// A new, empty garage: on the reference engine when `onReference`, else ``garage(encryptionKey:)``.
    static func garage(onReference: Bool, encryptionKey: StoreKey? = nil) throws -> Garage {
        onReference ? try referenceGarage(encryptionKey: encryptionKey) : try garage(encryptionKey: encryptionKey)
    }

    /// A new, empty garage: in memory on SQLite, in a schema of its own on PostgreSQL.
    static func garage(encryptionKey: StoreKey? = nil) throws -> Garage {
        if isReference { return try referenceGarage(encryptionKey: encryptionKey) }
        guard isPostgres, let url = postgresURL else { return try Garage(engine: .inMemory(), encryptionKey: encryptionKey) }
        return try Garage(engine: .postgres(url: schemaURL(url, schema: newSchemaName()), options: options), encryptionKey: encryptionKey)
    }

    /// The garage of the store at `path`: the file on SQLite; on PostgreSQL, the schema that
    /// `path` names (the same path, the same schema), so that tests that open one store twice,
    /// or with two garages, run on both engines.
    static func garage(path: String, busyTimeout: TimeInterval = GarageEngine.defaultBusyTimeout,
                       encryptionKey: StoreKey? = nil) throws -> Garage {
        if isReference {
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            let store = referenceStores.write { stores in
                if let store = stores[absolute] { return store }
                let store = ReferenceEngine.Store()
                stores[absolute] = store
                return store
            }
            return try Garage(engine: GarageEngine(ReferenceEngine(sharing: store)), encryptionKey: encryptionKey)
        }
        // The rule the processes a test starts follow too (garage-stress-worker).
        return try TestStores.open(path: path, busyTimeout: busyTimeout, encryptionKey: encryptionKey)
    }

    /// The store of `path` (``garage(path:busyTimeout:encryptionKey:)``'s) as the tools take
    /// it, for a test that starts `garage-server` on it: the file, or the schema's URL.
    static func location(path: String) -> String {
        TestStores.location(path: path)
    }

    /// Another garage on the store `garage` works on (one of ``garage(path:busyTimeout:encryptionKey:)``),
    /// as another garage of the app would open it.
    static func garage(reopening garage: Garage, encryptionKey: StoreKey? = nil) throws -> Garage {
        if let engine = garage.store.engine as? ReferenceEngine, engine.isShared {
            return try Garage(engine: GarageEngine(ReferenceEngine(sharing: engine.store)), encryptionKey: encryptionKey)
        }
        guard let path = garage.path else { throw GarageError.cannotOpenStore(path: ":memory:", reason: "a store in memory") }
        guard isPostgres, let url = postgresURL else { return try Garage(path: path, encryptionKey: encryptionKey) }
        let schema = URLComponents(string: path)?.queryItems?.first { $0.name == "schema" }?.value ?? ""
        return try Garage(engine: .postgres(url: schemaURL(url, schema: schema), options: options), encryptionKey: encryptionKey)
    }

    /// Damages the store of `path` (of ``garage(path:busyTimeout:encryptionKey:)``) below the
    /// garage: the row `invalidJSON` holds data that is not JSON, and, in a file, the row
    /// `textDate` a creation date that is text (a typed column can't hold it: elsewhere it stays).
    static func damage(_ garage: Garage, path: String, invalidJSON: ObjectKey, textDate: ObjectKey) throws {
        if hasFiles { return try damageForParity(path, invalidJSON: invalidJSON, textDate: textDate) }
        try garage.store.engine.write("damage") { statements in
            guard var row = try statements.record(invalidJSON)?.get() else { return }
            row.data = #"{"id": 2, "#
            try statements.putRow(row)
        }
    }

    /// How the garage's errors name the store of `path` (``garage(path:busyTimeout:encryptionKey:)``):
    /// its file on SQLite; the schema's address on PostgreSQL (`postgres://user@host:port/database?schema=…`,
    /// without the password); `:memory:` on the reference engine.
    static func storeName(path: String) -> String {
        if isReference { return ":memory:" }
        guard isPostgres, let url = postgresURL, let components = URLComponents(string: url) else { return path }
        return "postgres://\(components.user ?? "")@\(components.host ?? "localhost"):\(components.port ?? 5432)"
            + "\(components.path)?schema=\(schemaName(path: path))"
    }

    /// The schema a store path names on PostgreSQL.
    static func schemaName(path: String) -> String {
        TestStores.schemaName(path: path)
    }

    /// The tests' garages open at most 2 connections each: the suite runs many at once.
    static let options: PostgresGarageOptions = {
        var options = PostgresGarageOptions()
        options.maximumConnections = 2
        return options
    }()

    /// A schema name no other garage of this run has.
    static func newSchemaName() -> String {
        "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(24)
    }

    /// `url` with its `schema` query item set to `schema`.
    static func schemaURL(_ url: String, schema: String) -> String {
        TestStores.schemaURL(url, schema: schema)
    }
}

extension Trait where Self == ConditionTrait {
    /// For a suite that opens no garage of ``TestEngine`` (SQLite's files, the tools, processes,
    /// PostgreSQL's own tests, which the first pass runs with the server): the PostgreSQL pass
    /// skips it, since it would only run it again as the first pass did.
    static var firstPassOnly: Self {
        .disabled(if: TestEngine.isPostgres || TestEngine.isReference, "opens no garage of TestEngine: the first pass runs it")
    }

    /// For a suite of processes that share the test engine's store (``TestStores``, which
    /// `garage-stress-worker` and `garage-server` open too): every pass but the reference
    /// engine's, whose stores live in this process.
    static var acrossProcesses: Self {
        .disabled(if: TestEngine.isReference, "processes share the store: the reference engine keeps its stores in this process")
    }
}
