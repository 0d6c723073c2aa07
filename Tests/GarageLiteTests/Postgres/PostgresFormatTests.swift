import Crypto
import Foundation
import GarageLite
import GarageLitePostgres
import Testing

/// The format versions of a garage's PostgreSQL schema, and the moves between them. A schema of
/// version 1 is made from a new one by putting version 1's triggers back (the tables of the two
/// versions are the same).
@Suite("PostgreSQL: format versions", .serialized, .enabled(if: TestEngine.postgresURL != nil, "no PostgreSQL server: set GARAGE_POSTGRES_URL"))
struct PostgresFormatTests {
    private static func psql(_ sql: String) throws -> String { try PostgresEngineTests.psql(sql) }

    /// The triggers on the schema's object table, by name.
    private static func triggers(_ schema: String) throws -> [String] {
        try psql("""
            SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger
            WHERE tgrelid = '\(schema).garage_object'::regclass AND NOT tgisinternal
            """).split(separator: ",").map(String.init)
    }

    /// Makes the schema version 1's: its row triggers call their functions for every row.
    private static func moveBackToVersion1(_ schema: String) throws {
        try psql("""
            DROP TRIGGER garage_reference_insert ON \(schema).garage_object;
            DROP TRIGGER garage_reference_update ON \(schema).garage_object;
            DROP TRIGGER garage_reference_delete ON \(schema).garage_object;
            DROP TRIGGER IF EXISTS garage_encryption_guard ON \(schema).garage_object;
            CREATE TRIGGER garage_keep_references AFTER INSERT OR UPDATE OR DELETE ON \(schema).garage_object
                FOR EACH ROW EXECUTE FUNCTION \(schema).garage_keep_references();
            CREATE TRIGGER garage_encryption_guard AFTER INSERT OR UPDATE OF data, is_encrypted ON \(schema).garage_object
                FOR EACH ROW EXECUTE FUNCTION \(schema).garage_encryption_guard();
            UPDATE \(schema).garage_format SET version = 1;
            """)
    }

    private static let version2Triggers = ["garage_notify_objects", "garage_reference_delete", "garage_reference_insert",
                                           "garage_reference_update"]

    @Test func aNewSchemaIsVersion2WithTriggersForTheRowsTheyConcern() throws {
        let (url, schema) = PostgresEngineTests.newSchema()
        _ = try Garage(postgresURL: url)
        #expect(try Self.psql("SELECT version FROM \(schema).garage_format") == "2")
        #expect(try Self.triggers(schema) == Self.version2Triggers)
    }

    /// A version 1 schema moves to version 2 when a garage opens it, with its rows, and its index
    /// of references is kept right by the new triggers: a reference added, one removed, a row
    /// deleted.
    @Test func aVersion1SchemaMovesToVersion2() throws {
        let (url, schema) = PostgresEngineTests.newSchema()
        let ann = Author(id: UUID(), name: "Ann"), bob = Author(id: UUID(), name: "Bob")
        do {
            let garage = try Garage(postgresURL: url)
            try garage.park(Book(id: 1, title: "First", author: ann))
            try garage.park(Memo(id: "m1", text: "no references"))
        }
        try Self.moveBackToVersion1(schema)
        #expect(try Self.triggers(schema) == ["garage_encryption_guard", "garage_keep_references", "garage_notify_objects"])

        let garage = try Garage(postgresURL: url)
        #expect(try Self.psql("SELECT version FROM \(schema).garage_format") == "2")
        #expect(try Self.triggers(schema) == Self.version2Triggers)
        #expect(try garage.retrieve(Book.self, identifier: 1)?.author.name == "Ann")
        #expect(try garage.referrers(of: Author.self, identifier: ann.id).map(\.identifier) == ["1"])
        try garage.park(Book(id: 1, title: "First", author: bob, coAuthors: [ann]))
        try garage.park(Book(id: 2, title: "Second", author: bob))
        #expect(try garage.referrers(of: Author.self, identifier: bob.id).map(\.identifier).sorted() == ["1", "2"])
        try garage.park(Book(id: 1, title: "First", author: bob))
        #expect(try garage.referrers(of: Author.self, identifier: ann.id).isEmpty)
        try garage.delete(Book.self, identifier: 2)
        #expect(try garage.referrers(of: Author.self, identifier: bob.id).map(\.identifier) == ["1"])
        #expect(try garage.check().problems.isEmpty)
    }

    /// The encryption guard's trigger stays in a version 1 schema that has a key (its function
    /// checks), and goes from one that has none (its function did nothing); a key set later
    /// brings it back, and it refuses a plaintext write.
    @Test func theGuardsTriggerExistsWhileThereIsAGuard() throws {
        let key = StoreKey.key(SymmetricKey(size: .bits256))
        let (url, schema) = PostgresEngineTests.newSchema()
        do {
            let garage = try Garage(postgresURL: url, encryptionKey: key)
            try garage.park(Memo(id: "m1", text: "sealed"))
        }
        #expect(try Self.triggers(schema).contains("garage_encryption_guard"))
        try Self.moveBackToVersion1(schema)
        let garage = try Garage(postgresURL: url, encryptionKey: key)
        #expect(try Self.triggers(schema).contains("garage_encryption_guard"))
        #expect(try garage.retrieve(Memo.self, identifier: "m1")?.text == "sealed")
        let server = try #require(TestEngine.postgresURL)
        var components = try #require(URLComponents(string: server))
        components.queryItems = nil
        let address = try #require(components.string)
        let plaintext = try PostgresEngineTests.psqlRun([address, "-v", "ON_ERROR_STOP=1", "-tA", "-c",
            "UPDATE \(schema).garage_object SET data = '{}', is_encrypted = false WHERE identifier = 'm1'"])
        #expect(plaintext.exitCode != 0, "a plaintext write into an encrypted store: \(plaintext)")

        let (plainURL, plainSchema) = PostgresEngineTests.newSchema()
        _ = try Garage(postgresURL: plainURL)
        try Self.moveBackToVersion1(plainSchema)
        let plain = try Garage(postgresURL: plainURL)
        #expect(try Self.triggers(plainSchema) == Self.version2Triggers)
        try plain.park(Memo(id: "m1", text: "plain"))
        _ = try Garage(postgresURL: plainURL, encryptionKey: key)
        #expect(try Self.triggers(plainSchema).contains("garage_encryption_guard"))
    }
}
