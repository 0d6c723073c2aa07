import Crypto
import Foundation
@testable import GarageLite
import Testing

struct GSAddress: Codable, Hashable, Sendable {
    var street: String
    var city: String
}

/// A class, as GarageStorage's test models are.
final class GSPerson: Codable, Identifiable, Syncable {
    var id: String
    var name: String
    var birthdate: Date?
    var brother: GSPerson?
    var siblings: [GSPerson]
    @Migratable var address: GSAddress?
    var syncStatus: SyncStatus = .undetermined

    init(id: String, name: String, siblings: [GSPerson]) {
        self.id = id
        self.name = name
        self.siblings = siblings
    }
}

struct GSSyncingAddress: Codable, Hashable, Syncable, Sendable {
    var street: String
    var syncStatus: SyncStatus = .undetermined
}

struct GSHome: Codable, Identifiable, Sendable {
    var id: String
    var address: GSSyncingAddress
    var tags: [String]
}

/// A model migrated from an Objective-C `SyncableObject` nested anonymously (issue 24).
struct GSSyncingHome: Codable, Identifiable, Sendable {
    var id: String
    @Migratable var address: GSSyncingAddress?
    var previous: GSSyncingAddress?
    var others: [GSSyncingAddress]
}

/// Issue 12: rows in the shapes GarageStorage wrote — its Swift side's (an empty array of
/// references has no key) and its Objective-C side's (references, dates and nested objects as
/// dictionaries) — read as GarageStorage's decoders read them.
@Suite("GarageStorage's JSON shapes", .firstPassOnly)
struct GarageStorageShapeTests {
    /// A garage on a file, with `rows` (type, identifier, JSON) written as another program would.
    static func garage(_ directory: TemporaryDirectory, rows: [(String, String, String)],
                       encryptor: TestEncryptor? = nil) throws -> Garage {
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        garage.dataEncryptionDelegate = encryptor
        let file = try SQLiteFile(path)
        for (type, identifier, data) in rows {
            try file.execute("""
                INSERT INTO garage_object (type, identifier, data, creationDate, modificationDate, isRoot)
                VALUES (?, ?, ?, 0, 0, 1)
                """, [type, identifier, data])
        }
        return garage
    }

    @Test func objectiveCReferencesDatesAndNestedObjectsRead() throws {
        let directory = try TemporaryDirectory()
        let nick = #"{"id":"Nick","name":"Nick","siblings":[]}"#
        let sam = """
            {"id":"Sam","name":"Sam",
             "birthdate":{"gs_type":"gs_transformableType","gs_transformableType":"gs_transformableDate","gs_transformableData":"1950-01-01T04:00:00Z"},
             "brother":{"gs_type":"GSPerson","gs_identifier":"Nick"},
             "siblings":[{"gs_type":"GSPerson","gs_identifier":"Nick"}],
             "address":{"gs_identifier":"kGSAnonymousObject","gs_type":"GSAddress","kGSAnonymousDataKey":"{\\"street\\":\\"1 Main\\",\\"city\\":\\"Boston\\"}"}}
            """
        let garage = try Self.garage(directory, rows: [("GSPerson", "Nick", nick), ("GSPerson", "Sam", sam)])
        let person = try #require(try garage.retrieve(GSPerson.self, identifier: "Sam"))
        #expect(person.brother?.name == "Nick")
        #expect(person.siblings.map(\.id) == ["Nick"])
        #expect(person.birthdate == ISO8601DateFormatter().date(from: "1950-01-01T04:00:00Z"))
        #expect(person.address == GSAddress(street: "1 Main", city: "Boston"))
        // Parked again, it is stored in GarageLite's shapes, and reads the same.
        try garage.park(person)
        let stored = try #require(try garage.store.storedRow(ObjectKey(typeName: "GSPerson", identifier: "Sam")))
        #expect(!stored.data.contains("gs_") && !stored.data.contains("kGSAnonymous"))
        #expect(try garage.retrieve(GSPerson.self, identifier: "Sam")?.address?.city == "Boston")
    }

    @Test func anEncryptedNestedObjectReadsWithTheDelegate() throws {
        let directory = try TemporaryDirectory()
        let encryptor = TestEncryptor()
        let text = try encryptor.encrypt(Data(#"{"street":"2 Elm","syncStatus":0}"#.utf8))
        let home = #"{"id":"h","tags":[],"address":{"gs_identifier":"kGSAnonymousObject","gs_type":"GSSyncingAddress","kGSAnonymousDataKey":"\#(text)","gs_syncStatus":3}}"#
        let garage = try Self.garage(directory, rows: [("GSHome", "h", home)])
        #expect(throws: DecodingError.self) { try garage.retrieve(GSHome.self, identifier: "h") }
        garage.dataEncryptionDelegate = encryptor
        let address = try #require(try garage.retrieve(GSHome.self, identifier: "h")).address
        #expect(address.street == "2 Elm")
        #expect(address.syncStatus == .synced)
    }

    /// Issue 24: GarageStorage's Objective-C side kept a nested `SyncableObject`'s status beside
    /// its text (`gs_syncStatus`), never in it; the `Syncable` value it migrates to takes that
    /// status, under `@Migratable` too, as GarageStorage's `Migratable` set it.
    @Test func anAnonymousObjectsSyncStatusBecomesTheValuesStatus() throws {
        func envelope(_ text: String, _ status: Int) -> String {
            let escaped = text.replacingOccurrences(of: "\"", with: "\\\"")
            return #"{"gs_identifier":"kGSAnonymousObject","gs_type":"SyncingAddress","kGSAnonymousDataKey":"\#(escaped)","gs_syncStatus":\#(status)}"#
        }
        // The issue's case: the text holds a status of its own (0), the envelope says 3.
        let first = #"{"id":"h1","address":\#(envelope(#"{"street":"1 Elm","syncStatus":0}"#, 3)),"others":[]}"#
        // Objective-C's own: the text holds no status.
        let second = #"{"id":"h2","address":\#(envelope(#"{"street":"2 Elm"}"#, 1)),"#
            + #""previous":\#(envelope(#"{"street":"3 Elm"}"#, 2)),"others":[\#(envelope(#"{"street":"4 Elm"}"#, 3))]}"#
        let directory = try TemporaryDirectory()
        let garage = try Self.garage(directory, rows: [("GSSyncingHome", "h1", first), ("GSSyncingHome", "h2", second)])
        let one = try #require(try garage.retrieve(GSSyncingHome.self, identifier: "h1"))
        #expect(one.address == GSSyncingAddress(street: "1 Elm", syncStatus: .synced))
        let two = try #require(try garage.retrieve(GSSyncingHome.self, identifier: "h2"))
        #expect(two.address == GSSyncingAddress(street: "2 Elm", syncStatus: .notSynced))
        #expect(two.previous == GSSyncingAddress(street: "3 Elm", syncStatus: .syncing))
        #expect(two.others == [GSSyncingAddress(street: "4 Elm", syncStatus: .synced)])
        // Parked again, the statuses are in GarageLite's JSON, and read back.
        try garage.park(two)
        let again = try #require(try garage.retrieve(GSSyncingHome.self, identifier: "h2"))
        #expect(again.address?.syncStatus == .notSynced && again.previous?.syncStatus == .syncing)
    }

    /// GarageStorage's encoder skipped an empty array of references; its decoder read a
    /// missing key as `[]`. Any other missing key is still an error.
    @Test func aMissingEmptyArrayOfReferencesReadsAsEmpty() throws {
        let directory = try TemporaryDirectory()
        let garage = try Self.garage(directory, rows: [
            ("GSPerson", "Emily", #"{"id":"Emily","name":"Emily"}"#),
            ("GSHome", "h", #"{"id":"h","address":{"street":"3 Oak","syncStatus":0}}"#),
        ])
        #expect(try garage.retrieve(GSPerson.self, identifier: "Emily")?.siblings.isEmpty == true)
        #expect(throws: DecodingError.self) { try garage.retrieve(GSHome.self, identifier: "h") }
    }

    // MARK: - @Migratable

    @Test func migratableReadsEveryFormAndWritesThePlainValue() throws {
        let boston = GSAddress(street: "1 Main", city: "Boston")
        let anonymous = #"{"id":"a","name":"A","syncStatus":0,"siblings":[],"address":{"gs_identifier":"kGSAnonymousObject","kGSAnonymousDataKey":"{\"street\":\"1 Main\",\"city\":\"Boston\"}"}}"#
        let plain = #"{"id":"b","name":"B","syncStatus":0,"siblings":[],"address":{"street":"1 Main","city":"Boston"}}"#
        let null = #"{"id":"c","name":"C","syncStatus":0,"siblings":[],"address":null}"#
        let missing = #"{"id":"d","name":"D","syncStatus":0,"siblings":[]}"#
        // With a plain JSONDecoder, as GarageStorage's wrapper.
        let decoder = JSONDecoder()
        #expect(try decoder.decode(GSPerson.self, from: Data(anonymous.utf8)).address == boston)
        #expect(try decoder.decode(GSPerson.self, from: Data(plain.utf8)).address == boston)
        #expect(try decoder.decode(GSPerson.self, from: Data(null.utf8)).address == nil)
        #expect(try decoder.decode(GSPerson.self, from: Data(missing.utf8)).address == nil)
        // In a garage.
        let directory = try TemporaryDirectory()
        let garage = try Self.garage(directory, rows: [("GSPerson", "a", anonymous), ("GSPerson", "b", plain),
                                                       ("GSPerson", "c", null), ("GSPerson", "d", missing)])
        #expect(try garage.retrieveAll(GSPerson.self).map(\.address) == [boston, boston, nil, nil])
        // Written as the plain value.
        let person = GSPerson(id: "e", name: "E", siblings: [])
        person.address = boston
        let json = String(decoding: try JSONEncoder().encode(person), as: UTF8.self)
        #expect(json.contains(#""address":{"#) && !json.contains("kGSAnonymous"))
        try garage.park(person)
        #expect(try garage.retrieve(GSPerson.self, identifier: "e")?.address == boston)
        #expect(Migratable<GSAddress>().wrappedValue == nil)
    }
}
