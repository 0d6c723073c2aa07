@testable import GarageLite
import Testing

/// Issue 44: `RowStatements.rows(_:for:)`, the rows of many keys at once (PostgreSQL reads them
/// in one statement a type), reads as one `row(_:for:)` a key does, on every engine.
@Suite("Rows by key")
struct RowsByKeyTests {
    struct KeyedShelf: Codable, Identifiable, Equatable {
        var id: String
        var label: String
    }

    struct KeyedJar: Codable, Identifiable, Equatable {
        var id: String
        var contents: String
    }

    @Test func manyKeysReadAsOneAtATime() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkAll((0..<40).map { KeyedShelf(id: "s\($0)", label: "shelf \($0)") })
        try await garage.parkAll((0..<10).map { KeyedJar(id: "j\($0)", contents: "jam \($0)") })
        _ = try await garage.delete(KeyedShelf.self, identifier: "s3")
        let shelf = try garage.storedTypeName(KeyedShelf.self), jar = try garage.storedTypeName(KeyedJar.self)
        // Two types, missing keys, a deleted object, a key twice, in no order.
        let keys = [ObjectKey(typeName: shelf, identifier: "s7"), ObjectKey(typeName: jar, identifier: "j2"),
                    ObjectKey(typeName: shelf, identifier: "s3"), ObjectKey(typeName: shelf, identifier: "nothing"),
                    ObjectKey(typeName: "NoSuchType", identifier: "s1"), ObjectKey(typeName: shelf, identifier: "s7")]
            + (0..<40).reversed().map { ObjectKey(typeName: shelf, identifier: "s\($0)") }
        let (many, single) = try garage.store.engine.read("read by key") { statements in
            (try statements.rows(keys, for: .content), try keys.map { try statements.row($0, for: .content) })
        }
        #expect(many.count == keys.count)
        #expect(many.map { $0?.key } == single.map { $0?.key })
        #expect(many.map { $0?.data } == single.map { $0?.data })
        #expect(many.map { $0?.revision } == single.map { $0?.revision })
        #expect(many[0]?.key.identifier == "s7" && many[1]?.key.identifier == "j2")
        #expect(many[2] == nil && many[3] == nil && many[4] == nil, "deleted, missing, of no such type")
        // Through a snapshot, as a server's page reads them.
        let read = try await garage.retrieve(KeyedShelf.self, identifiers: ["s1", "s3", "s39", "zz"])
        #expect(read == [KeyedShelf(id: "s1", label: "shelf 1"), nil, KeyedShelf(id: "s39", label: "shelf 39"), nil])
    }

    @Test func insideATransactionPendingChangesAreRead() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkAll((0..<5).map { KeyedShelf(id: "s\($0)", label: "old") })
        let read = try await garage.transaction {
            try await garage.park(KeyedShelf(id: "s1", label: "new"))
            _ = try await garage.delete(KeyedShelf.self, identifier: "s2")
            try await garage.park(KeyedShelf(id: "s9", label: "added"))
            return try await garage.retrieve(KeyedShelf.self, identifiers: ["s0", "s1", "s2", "s9"])
        }
        #expect(read.map { $0?.label } == ["old", "new", nil, "added"])
    }
}
