import Foundation
import GRDB
import Testing
@testable import GarageLite

/// A file store holding a graph of the test models, a second connection that overwrites its
/// rows behind the garage's back, and what every row reads as before it is damaged.
final class FuzzedStore {
    let directory: TemporaryDirectory
    let path: String
    let garage: Garage
    /// Autosave off, with an unsaved change: reads go through the unsaved-changes path.
    let pendingGarage: Garage
    /// The connection that damages and restores rows.
    let connection: DatabaseQueue
    /// Every row as parked, in key order.
    let originals: [Row]
    let keys: [ObjectKey]
    /// What `retrieve` gives for each row, and its metadata, before any damage.
    private(set) var fingerprints: [ObjectKey: String] = [:]
    private(set) var metadata: [ObjectKey: ObjectMetadata] = [:]
    /// Each row's key, with every row it references directly or not.
    let closures: [ObjectKey: Set<ObjectKey>]
    let probes: [String: Probe]

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.path("fuzz.sqlite")
        garage = try Garage(path: path)
        try FuzzModels.park(into: garage)
        // Durability is not under test: don't wait for the disk on every claim and release.
        try garage.store.writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = OFF") }

        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        connection = try DatabaseQueue(path: path, configuration: configuration)
        originals = try connection.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.comparedColumns) FROM garage_object ORDER BY type, identifier")
        }
        keys = try originals.map { ObjectKey(typeName: try $0.decode(String.self, forColumn: "type"),
                                          identifier: try $0.decode(String.self, forColumn: "identifier")) }

        var references: [ObjectKey: [ObjectKey]] = [:]
        for (key, row) in zip(keys, originals) {
            references[key] = try ReferenceList.decode(try row.decode(String.self, forColumn: "refs"))
        }
        var closures: [ObjectKey: Set<ObjectKey>] = [:]
        for key in keys {
            var reached: Set<ObjectKey> = [key]
            var queue = [key]
            while let next = queue.popLast() {
                for referenced in references[next] ?? [] where reached.insert(referenced).inserted {
                    queue.append(referenced)
                }
            }
            closures[key] = reached
        }
        self.closures = closures
        probes = Dictionary(uniqueKeysWithValues: FuzzModels.probes.map { ($0.typeName, $0) })

        pendingGarage = try Garage(path: path)
        pendingGarage.isAutosaveEnabled = false
        try pendingGarage.park(Counter(id: 1, value: 1))

        for key in keys {
            let probe = try #require(probes[key.typeName], "no probe for \(key.typeName)")
            fingerprints[key] = try #require(try probe.retrieve(garage, key.identifier))
            #expect(try probe.retrieve(garage, key.identifier) == fingerprints[key], "fingerprints must be stable")
            metadata[key] = try #require(try probe.metadata(garage, key.identifier))
        }
    }

    /// The rows whose retrieve reads `key`'s row.
    func dependents(of key: ObjectKey) -> [ObjectKey] {
        keys.filter { closures[$0]?.contains(key) ?? false }
    }

    /// Overwrites one column of `key`'s row; `false` when SQLite refuses the value (a NaN is
    /// stored as NULL, which the column's NOT NULL constraint refuses).
    func overwrite(_ column: FuzzedColumn, of key: ObjectKey, with value: StoredValue) throws -> Bool {
        // The column name comes from a fixed list, never from generated data.
        let sql = "UPDATE garage_object SET \(column.rawValue) = \(value.placeholder) WHERE type = ? AND identifier = ?"
        do {
            try connection.write { db in
                try db.execute(sql: sql, arguments: [value.databaseValue, key.typeName, key.identifier])
            }
            return true
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            return false
        }
    }

    /// Puts back every column of `key`'s row as it was parked.
    func restore(_ key: ObjectKey) throws {
        let original = try #require(keys.firstIndex(of: key).map { originals[$0] })
        let columns = FuzzedStore.restoredColumns
        try connection.write { db in
            try db.execute(
                sql: "UPDATE garage_object SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) "
                    + "WHERE type = ? AND identifier = ?",
                arguments: StatementArguments(columns.map { name -> DatabaseValue in (original[name] as DatabaseValue?) ?? .null }
                    + [key.typeName.databaseValue, key.identifier.databaseValue]))
        }
    }

    private static let restoredColumns = [
        "data", "isEncrypted", "syncStatus", "creationDate", "modificationDate", "revision", "isRoot", "refs",
        "claim", "claimedAt",
    ]

    /// Puts back every row as it was parked.
    func restoreAll() throws {
        for key in keys { try restore(key) }
    }

    /// The whole table, to compare with ``originals``.
    func currentRows() throws -> [Row] {
        try connection.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.comparedColumns) FROM garage_object ORDER BY type, identifier")
        }
    }

    /// Every column but whether a copy may be on the server (`isRemote`), which the probes'
    /// claims set for good.
    static let comparedColumns = """
        type, identifier, data, isEncrypted, syncStatus, creationDate, modificationDate, revision, isRoot, refs, \
        claim, claimedAt, isDeleted
        """

    /// The number of rows of `type` a claim takes now.
    func claimableCount(_ type: String) throws -> Int {
        try connection.read { db in
            try Int.fetchOne(db, sql: """
                SELECT COUNT(*) FROM garage_object WHERE type = ? AND syncStatus = ? AND claim IS NULL
                """, arguments: [type, SyncStatus.notSynced.rawValue]) ?? 0
        }
    }

    func original(_ column: FuzzedColumn, of key: ObjectKey) -> DatabaseValue {
        guard let index = keys.firstIndex(of: key) else { return .null }
        return (originals[index][column.rawValue] as DatabaseValue?) ?? .null
    }
}

/// The columns the store tests overwrite.
enum FuzzedColumn: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case data, refs, syncStatus, isEncrypted, creationDate

    var testDescription: String { rawValue }
}

/// A value as SQLite stores it; text may hold any bytes, invalid UTF-8 and NUL included.
enum StoredValue: Sendable, CustomStringConvertible {
    case integer(Int64)
    case real(Double)
    case text([UInt8])
    case blob([UInt8])

    /// Text is bound as a blob and cast, so that its bytes reach the column unchanged.
    var placeholder: String {
        if case .text = self { return "CAST(? AS TEXT)" }
        return "?"
    }

    var databaseValue: DatabaseValue {
        switch self {
        case .integer(let value): return value.databaseValue
        case .real(let value): return value.databaseValue
        case .text(let bytes), .blob(let bytes): return Data(bytes).databaseValue
        }
    }

    var description: String {
        switch self {
        case .integer(let value): return "integer \(value)"
        case .real(let value): return "real \(value)"
        case .text(let bytes): return "text \(FuzzModels.show(bytes))"
        case .blob(let bytes): return "blob \(FuzzModels.show(bytes))"
        }
    }
}

/// What a case does to a column: mutates its value, puts another row's value there
/// (mutated), or writes a value of any kind.
enum ColumnEdit: Sendable, CustomStringConvertible {
    case mutate([ByteMutation], asBlob: Bool)
    case donor(Int, [ByteMutation])
    case value(StoredValue)

    var description: String {
        switch self {
        case let .mutate(mutations, asBlob): return "mutate\(asBlob ? " as blob" : "") \(mutations)"
        case let .donor(index, mutations): return "donor \(index), then \(mutations)"
        case let .value(value): return "value \(value)"
        }
    }

    /// The value written over `original`; `donors` are the same column of the other rows.
    func value(over original: DatabaseValue, donors: [DatabaseValue]) -> StoredValue {
        func bytes(_ value: DatabaseValue) -> [UInt8] {
            switch value.storage {
            case .string(let text): return Array(text.utf8)
            case .int64(let integer): return Array(String(integer).utf8)
            case .double(let double): return Array(String(double).utf8)
            case .blob(let data): return Array(data)
            case .null: return []
            }
        }
        let donorBytes = donors.map(bytes)
        switch self {
        case let .mutate(mutations, asBlob):
            var edited = bytes(original)
            for mutation in mutations { mutation.apply(to: &edited, donors: donorBytes) }
            return asBlob ? .blob(edited) : .text(edited)
        case let .donor(index, mutations):
            var edited = donorBytes.isEmpty ? [] : donorBytes[index % donorBytes.count]
            for mutation in mutations { mutation.apply(to: &edited, donors: donorBytes) }
            return .text(edited)
        case let .value(value):
            return value
        }
    }
}

/// The object model the fuzz tests park, and how to read each type back.
enum FuzzModels {
    static func author(_ suffix: String, _ name: String) -> Author {
        Author(id: UUID(uuidString: "00000000-0000-0000-0000-0000000000\(suffix)")!, name: name)
    }

    /// People with family, a library, a shelf with authors everywhere, a tree of branches:
    /// references in properties, optionals, arrays, sets, dictionaries and nested structs.
    static func park(into garage: Garage) throws {
        let max = Person(name: "Max", age: 41)
        let ann = Person(name: "Ann", age: 27, address: Address(street: "1 \"Quoted\" Way", city: "Zürich", zip: "8001"))
        ann.importantDates = [Date(timeIntervalSinceReferenceDate: -1e9), Date(timeIntervalSinceReferenceDate: 7.25)]
        let sam = Person(name: "Sam", age: 35, address: Address(street: "2 Main St", city: "Springfield", zip: "01101"))
        sam.brother = max
        sam.siblings = [max, ann]
        sam.importantDates = [Date(timeIntervalSinceReferenceDate: 123_456.5)]
        let zoe = Person(name: "Zoe 🦊\ttab", age: 0, birthdate: Date(timeIntervalSinceReferenceDate: -0.001))
        for person in [max, ann, sam, zoe] { person.syncStatus = .notSynced }
        max.syncStatus = .synced
        try garage.parkAll([sam, zoe])

        let a1 = author("A1", "Ursula"), a2 = author("A2", "Octavia \\ Butler"), a3 = author("A3", "")
        let book1 = Book(id: 1, title: "Tab\tand \u{1} control", author: a1, coAuthors: [a2])
        let book2 = Book(id: -2, title: "Second", author: a2, syncStatus: .synced)
        try garage.park(Loan(id: "L1", book: book1, guarantor: a3))
        try garage.park(book2)
        try garage.park(Shelf(
            id: "S1", byGenre: ["sf": a1, "": a2], byRank: [1: a2, 2: a3], favourites: [a1, a3],
            rows: [[a1], [a2, a3]], optionalAuthors: [a1, nil],
            display: Shelf.Display(label: "Front", featured: a2)))
        try garage.park(Tree(id: "T1", root: Branch(id: "b0", leaves: 3, children: [
            Branch(id: "b1", leaves: 1),
            Branch(id: "b2", leaves: 2, children: [Branch(id: "b3", leaves: 0)]),
        ])))
    }

    static let probes: [Probe] = [
        Probe(Person.self, object: { Person(name: $0) }),
        Probe(Author.self, object: { Author(id: UUID(uuidString: $0) ?? UUID(), name: "") }),
        Probe(Book.self, object: { Book(id: Int($0) ?? 0, title: "", author: author("00", "")) }),
        Probe(Loan.self), Probe(Shelf.self, canonical: CanonicalShelf.init), Probe(Tree.self), Probe(Branch.self),
    ]

    /// A short, exact rendering of bytes for failure messages.
    static func show(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        if bytes.count <= 300 && Array(text.utf8) == bytes {
            return String(reflecting: text)
        }
        return "\(bytes.count) bytes: \(bytes.prefix(300))"
    }
}

/// A shelf with its set and its `Int`-keyed dictionary in order (a string-keyed dictionary
/// is written with sorted keys).
struct CanonicalShelf: Encodable {
    var shelf: Shelf
    var favourites: [Author]
    var byRank: [[String]]

    init(_ shelf: Shelf) {
        self.shelf = shelf
        self.shelf.favourites = []
        self.shelf.byRank = [:]
        favourites = shelf.favourites.sorted { $0.id.uuidString < $1.id.uuidString }
        byRank = shelf.byRank.sorted { $0.key < $1.key }.map { [String($0.key), Probe.fingerprint($0.value)] }
    }
}

/// The operations of the public API on one type, with their results reduced to comparable
/// values: an object becomes its JSON (sorted keys), as `JSONEncoder` writes it.
struct Probe: Sendable {
    let typeName: String
    let retrieve: @Sendable (Garage, String) throws -> String?
    let retrieveAll: @Sendable (Garage) throws -> [String]
    let metadata: @Sendable (Garage, String) throws -> ObjectMetadata?
    /// Claims every claimable object, releases the claim, and returns how many were claimed.
    let claimAndRelease: @Sendable (Garage) throws -> Int
    /// `syncStatus(for:)`, for `Syncable` types.
    private(set) var syncStatus: (@Sendable (Garage, String) throws -> SyncStatus)?
    /// Decodes a row with a garage's decoder, outside any store.
    let decode: @Sendable (GraphDecoder, StoredRow) throws -> String

    init<T: Codable & SendableMetatype>(_ type: T.Type) {
        self.init(T.self, canonical: { $0 })
    }

    /// - parameter canonical: The object with its unordered collections in a fixed order
    ///   (a set or a dictionary with non-string keys is written in its instance's own order).
    init<T: Codable & SendableMetatype, Canonical: Encodable & SendableMetatype>(_ type: T.Type, canonical: @escaping @Sendable (T) -> Canonical) {
        let fingerprint: @Sendable (T) -> String = { Probe.fingerprint(canonical($0)) }
        // The fuzzed models have names of their own in this process: a collision is the tests' bug.
        typeName = try! Identity.typeName(T.self)
        retrieve = { garage, identifier in try garage.retrieve(T.self, identifier: identifier).map(fingerprint) }
        retrieveAll = { garage in try garage.retrieveAll(T.self).map(fingerprint) }
        metadata = { garage, identifier in try garage.metadata(T.self, identifier: identifier) }
        claimAndRelease = { garage in
            let claim = try garage.claim(T.self, limit: 1_000)
            do {
                try garage.release(claim)
            } catch {
                // A row damaged since the claim can make the release throw: end the claim the
                // way a job that crashed gets it ended, for the next cases.
                try garage.releaseStaleClaims(olderThan: -3_600)
                throw error
            }
            // A row that can't be decoded is left unclaimed and reported: its error must name it.
            if let failure = claim.failures.first { throw failure.error }
            return claim.count
        }
        syncStatus = nil
        decode = { decoder, row in fingerprint(try decoder.decode(T.self, from: row)) }
    }

    init<T: Codable & Syncable & SendableMetatype>(_ type: T.Type, object: @escaping @Sendable (String) -> T) {
        var probe = Probe(T.self)
        probe.syncStatus = { garage, identifier in try garage.syncStatus(for: object(identifier)) }
        self = probe
    }

    static func fingerprint<T: Encodable>(_ object: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return String(decoding: try encoder.encode(object), as: UTF8.self)
        } catch {
            // Decoded values that JSONEncoder refuses (none so far): still comparable.
            return "unencodable: \(error)"
        }
    }
}

/// Records an issue unless `error` is the clear error a damaged row must give: a
/// `GarageError` or `DecodingError` that names the row `key` (its type and identifier).
func expectRowError(_ error: any Error, naming key: ObjectKey, _ comment: Comment,
                    sourceLocation: SourceLocation = #_sourceLocation) {
    switch error {
    case let error as GarageError:
        switch error {
        case let .corruptData(type, identifier, _), let .missingEncryptionDelegate(type, identifier):
            #expect(type == key.typeName && identifier == key.identifier,
                    comment.with("\(error) names another row than \(key)"), sourceLocation: sourceLocation)
        case let .storageDataIsNil(object):
            // GarageStorage's case, which has room for one name: the object's, Type(identifier).
            #expect(object == key.description, comment.with("\(error) names another row than \(key)"),
                    sourceLocation: sourceLocation)
        case let .referenceCycle(_, _, cycle):
            #expect(cycle.contains(key.description), comment.with("\(error) does not name \(key)"),
                    sourceLocation: sourceLocation)
        default:
            Issue.record(comment.with("\(error) does not name the damaged row \(key)"), sourceLocation: sourceLocation)
        }
    case let error as DecodingError:
        #expect(decodingDescription(error).contains(key.description),
                comment.with("\(error) does not name the damaged row \(key)"), sourceLocation: sourceLocation)
    default:
        Issue.record(comment.with("\(type(of: error)) is neither a GarageError nor a DecodingError: \(error)"),
                     sourceLocation: sourceLocation)
    }
}

func decodingDescription(_ error: DecodingError) -> String {
    switch error {
    case let .typeMismatch(_, context), let .valueNotFound(_, context), let .keyNotFound(_, context),
         let .dataCorrupted(context):
        return context.debugDescription
    @unknown default:
        return "\(error)"
    }
}
