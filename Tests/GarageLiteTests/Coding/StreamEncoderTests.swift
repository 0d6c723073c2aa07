import Foundation
import Testing
@testable import GarageLite

/// The stream encoder (`StreamEncoder`) writes the same bytes as the tree of containers it
/// replaces, for every shape a `Codable` type can take: it streams the ordinary ones, and gives
/// the others (a container used again after its parent moved on, a key written twice, a super
/// encoder, an error an `encode(to:)` catches) back to the tree.
@Suite("Coding: the stream encoder writes what the tree writes", .firstPassOnly)
struct StreamEncoderTests {
    /// The rows `encode` makes, streamed and as trees, must be the same; returns how many rows
    /// the stream gave to the tree.
    @discardableResult
    static func compare(dateStrategy: JSONEncoder.DateEncodingStrategy = .deferredToDate,
                        _ encode: (GraphEncoder) throws -> Void,
                        sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let streamed = GraphEncoder(dateStrategy: dateStrategy, context: .none, registry: RegisteredTypes())
        let tree = GraphEncoder(dateStrategy: dateStrategy, context: .none, registry: RegisteredTypes())
        tree.streams = false
        let streamedOutcome = Result { try encode(streamed) }
        let treeOutcome = Result { try encode(tree) }
        switch (streamedOutcome, treeOutcome) {
        case (.success, .success):
            #expect(streamed.rows.map(Summary.init) == tree.rows.map(Summary.init), sourceLocation: sourceLocation)
            #expect(tree.rowsGivenToTree == 0, sourceLocation: sourceLocation)
        case (.failure(let streamedError), .failure(let treeError)):
            #expect(String(describing: streamedError) == String(describing: treeError), sourceLocation: sourceLocation)
            if let streamedError = streamedError as? EncodingError, let treeError = treeError as? EncodingError,
               case .invalidValue(_, let streamedContext) = streamedError, case .invalidValue(_, let treeContext) = treeError {
                #expect(streamedContext.codingPath.map(\.stringValue) == treeContext.codingPath.map(\.stringValue),
                        sourceLocation: sourceLocation)
            }
        default:
            Issue.record("streamed: \(streamedOutcome), tree: \(treeOutcome)", sourceLocation: sourceLocation)
        }
        return streamed.rowsGivenToTree
    }

    struct Summary: Equatable {
        var key: ObjectKey
        var json: String
        var references: [ObjectKey]
        var isRoot: Bool
        var syncStatus: SyncStatus?
        var revision: Int64?

        init(_ row: EncodedRow) {
            key = row.key
            json = row.json
            references = row.references
            isRoot = row.isRoot
            syncStatus = row.syncStatus
            revision = row.revision
        }
    }

    // MARK: Streamed

    @Test func everyOrdinaryShapeIsStreamedAsTheTreeWritesIt() throws {
        let given = try Self.compare { try $0.encodeRoot(StreamEverything.sample) }
        #expect(given == 0)
    }

    @Test func everyDateStrategyIsWrittenAsTheTreeWritesIt() throws {
        let strategies: [JSONEncoder.DateEncodingStrategy] = [
            .deferredToDate, .secondsSince1970, .millisecondsSince1970, .iso8601,
            .custom { date, encoder in
                var container = encoder.container(keyedBy: StreamKey.self)
                try container.encode(date.timeIntervalSince1970, forKey: StreamKey("at"))
                try container.encode("custom", forKey: StreamKey("kind"))
            },
        ]
        for strategy in strategies {
            let given = try Self.compare(dateStrategy: strategy) { try $0.encodeRoot(StreamEverything.sample) }
            #expect(given == 0)
        }
    }

    @Test func syncableAndRevisionedRowsLeaveTheirColumnsOutOfTheJSON() throws {
        let given = try Self.compare {
            try $0.encodeRoot(StreamTracked(id: "t", syncStatus: .synced, revision: 7, note: "n", nested: .init(revision: 3)))
        }
        #expect(given == 0)
        let encoder = GraphEncoder(dateStrategy: .deferredToDate, context: .none, registry: RegisteredTypes())
        try encoder.encodeRoot(StreamTracked(id: "t", syncStatus: .synced, revision: 7, note: "n", nested: .init(revision: 3)))
        #expect(encoder.rows.first?.json == #"{"id":"t","syncStatus":\#(SyncStatus.undetermined.rawValue),"revision":0,"note":"n","nested":{"revision":3}}"#)
    }

    @Test func aSubclassThatAsksForTheSameEncodersContainerAgainIsStreamed() throws {
        let given = try Self.compare { try $0.encodeRoot(StreamDerived(id: "d", base: 1, extra: "x")) }
        #expect(given == 0)
    }

    @Test func emptyValuesAndKeysThatNeedEscapesAreStreamed() throws {
        let given = try Self.compare { try $0.encodeRoot(StreamCustom(id: "c", order: .emptyAndEscapedKeys)) }
        #expect(given == 0)
        let encoder = GraphEncoder(dateStrategy: .deferredToDate, context: .none, registry: RegisteredTypes())
        try encoder.encodeRoot(StreamCustom(id: "c", order: .emptyAndEscapedKeys))
        #expect(encoder.rows.first?.json == #"{"id":"c","empty":{},"a\"b":1,"é\n":[],"":{"":null}}"#)
    }

    @Test func nestedContainersFilledInOrderAreStreamed() throws {
        let given = try Self.compare { try $0.encodeRoot(StreamCustom(id: "c", order: .nestedInOrder)) }
        #expect(given == 0)
    }

    // MARK: Given to the tree

    @Test func aContainerUsedAgainAfterItsParentMovedOnGoesToTheTree() throws {
        for order in [StreamCustom.Order.nestedAfterParent, .unkeyedNestedAfterParent, .keyedThenUnkeyed,
                      .singleValueTwice, .singleThenKeyed] {
            let given = try Self.compare { try $0.encodeRoot(StreamCustom(id: "c", order: order)) }
            #expect(given == 1, "\(order)")
        }
        // A member written after a nested container was handed out, then the nested container.
        #expect(try Self.compare { try $0.encodeRoot(CodingNested.sample) } == 1)
    }

    @Test func aKeyWrittenTwiceGoesToTheTreeWhichKeepsTheLastValue() throws {
        let given = try Self.compare { try $0.encodeRoot(StreamCustom(id: "c", order: .keyTwice)) }
        #expect(given == 1)
        let encoder = GraphEncoder(dateStrategy: .deferredToDate, context: .none, registry: RegisteredTypes())
        try encoder.encodeRoot(StreamCustom(id: "c", order: .keyTwice))
        #expect(encoder.rows.first?.json == #"{"id":"c","b":2,"a":3}"#)
    }

    @Test func superEncodersGoToTheTree() throws {
        let car = CodingCar(id: "c1", wheels: 4, owner: CodingPerson(id: "p1", name: "Ann"), brand: "Saab")
        #expect(try Self.compare { try $0.encodeRoot(car) } == 1)
        #expect(try Self.compare { try $0.encodeRoot(CodingTruck(id: "t1", wheels: 18, owner: nil, payload: 12.25)) } == 1)
        #expect(try Self.compare { try $0.encodeRoot(CodingSilentSuper(id: "s", list: ["a", "b"])) } == 1)
    }

    @Test func anErrorAnEncodeToCatchesLeavesNoHalfWrittenMember() throws {
        let given = try Self.compare { try $0.encodeRoot(StreamCustom(id: "c", order: .caughtError)) }
        #expect(given == 1)
        let encoder = GraphEncoder(dateStrategy: .deferredToDate, context: .none, registry: RegisteredTypes())
        try encoder.encodeRoot(StreamCustom(id: "c", order: .caughtError))
        #expect(encoder.rows.first?.json == #"{"id":"c","after":true}"#)
    }

    @Test func errorsNameTheSameValueAsTheTreesDo() throws {
        try Self.compare { try $0.encodeRoot(StreamCustom(id: "c", order: .nan)) }
        try Self.compare { try $0.encodeRoot(StreamNaNs(id: "n", values: [1, .nan])) }
        try Self.compare { try $0.encodeRoot(StreamNaNs(id: "n", values: [], deep: [[2, .infinity]])) }
        try Self.compare { try $0.encodeRoot(StreamNaNs(id: "n", values: [], decimal: .nan)) }
        try Self.compare { try $0.encodeRoot(StreamNaNs(id: "n", values: [], text: "a\u{0}b")) }
        var deep = StreamDeep(id: "deep", child: nil)
        for _ in 0..<600 { deep = StreamDeep(id: "deep", child: StreamDeep.Box(deep)) }
        try Self.compare { try $0.encodeRoot(deep) }
    }

    // MARK: Random shapes

    /// Random trees of objects and arrays through keyed, unkeyed and single value containers,
    /// with dynamic keys, some of them repeated: every one is written as the tree writes it,
    /// and the trees without a repeated key are streamed.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func randomShapesAreWrittenAsTheTreeWritesThem(seed: UInt64) throws {
        var generator = SplitMix64(state: seed)
        var streamedCount = 0
        for index in 0..<40 {
            let node = StreamNode.random(depth: 0, using: &generator)
            let given = try Self.compare { try $0.encodeRoot(StreamRoot(id: "r\(index)", node: node)) }
            #expect(given == (node.repeatsAKey ? 1 : 0))
            if given == 0 { streamedCount += 1 }
        }
        #expect(streamedCount > 10)
    }
}

// MARK: - Models

struct StreamKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

struct StreamChild: Codable, Identifiable, Equatable {
    var id: String
    var name: String
}

struct StreamInline: Codable, InlineIdentifiable, Equatable {
    var id: String
    var done: Bool
}

struct StreamEverything: Codable, Identifiable {
    enum Mood: String, Codable { case calm, busy }
    enum Level: Int, Codable { case low = 1, high = 9 }
    enum Shape: Codable { case circle(radius: Double), square(Int, String), none }
    struct Address: Codable { var street: String; var zip: Int?; var lines: [String] }

    var id: String
    var flag: Bool
    var small: Int8
    var medium: Int32
    var large: Int64
    var unsigned: UInt64
    var negative: Int
    var ratio: Double
    var single: Float
    var text: String
    var escaped: String
    var missing: String?
    var present: Int?
    var date: Date
    var data: Data
    var url: URL
    var decimal: Decimal
    var uuid: UUID
    var mood: Mood
    var level: Level
    var shapes: [Shape]
    var address: Address
    var addresses: [Address]
    var strings: [String]
    var integers: [Int]
    var doubles: [Double]
    var flags: [Bool]
    var optionals: [String?]
    var matrix: [[Int]]
    var dictionary: [String: Int]
    var integerKeys: [Int: String]
    var set: Set<String>
    var child: StreamChild
    var children: [StreamChild]
    var optionalChild: StreamChild?
    var inline: StreamInline
    var dates: [Date]
    var statuses: [SyncStatus]

    static let sample = StreamEverything(
        id: "e1", flag: true, small: -8, medium: 1 << 30, large: .min, unsigned: .max, negative: -42,
        ratio: 0.1, single: 1.5, text: "plain", escaped: "a \"quote\", a \\ and a\ttab\n", missing: nil, present: 0,
        date: Date(timeIntervalSince1970: 1_700_000_000.25), data: Data([0, 1, 2, 250]),
        url: URL(string: "https://example.com/a?b=c")!, decimal: Decimal(string: "12.345")!,
        uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, mood: .busy, level: .high,
        shapes: [.circle(radius: 2.5), .square(3, "s"), .none],
        address: Address(street: "Main", zip: nil, lines: ["a", "b"]),
        addresses: [Address(street: "One", zip: 1, lines: []), Address(street: "Two", zip: 2, lines: ["x"])],
        strings: ["x", "", "ü"], integers: [1, -2, 3_000_000_000], doubles: [1, 2.5, -0.0, 1e300], flags: [true, false],
        optionals: ["a", nil], matrix: [[1, 2], [], [3]], dictionary: ["b": 2, "a": 1], integerKeys: [2: "two", 1: "one"],
        set: ["z", "y"], child: StreamChild(id: "c1", name: "one"),
        children: [StreamChild(id: "c2", name: "two"), StreamChild(id: "c1", name: "one")],
        optionalChild: StreamChild(id: "c3", name: "three"), inline: StreamInline(id: "i", done: true),
        dates: [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSince1970: -1)],
        statuses: [.synced, .notSynced])
}

struct StreamTracked: Codable, Identifiable, Syncable, Revisioned {
    struct Nested: Codable { var revision: Int64 }
    var id: String
    var syncStatus: SyncStatus
    var revision: Int64
    var note: String
    var nested: Nested
}

class StreamBase: Codable, Identifiable {
    var id: String
    var base: Int
    init(id: String, base: Int) {
        self.id = id
        self.base = base
    }
    enum CodingKeys: String, CodingKey { case id, base }
}

/// A subclass that encodes its superclass's part into the same container.
final class StreamDerived: StreamBase {
    var extra: String
    init(id: String, base: Int, extra: String) {
        self.extra = extra
        super.init(id: id, base: base)
    }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        extra = try container.decode(String.self, forKey: .extra)
        try super.init(from: decoder)
    }
    enum Keys: String, CodingKey { case extra }
    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(extra, forKey: .extra)
    }
}

/// A hand-written `encode(to:)` in one of several orders.
struct StreamCustom: Codable, Identifiable {
    enum Order: String, Codable {
        case emptyAndEscapedKeys, nestedInOrder, nestedAfterParent, unkeyedNestedAfterParent, keyedThenUnkeyed
        case singleValueTwice, singleThenKeyed, keyTwice, caughtError, nan
    }

    var id: String
    var order: Order

    struct Empty: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    struct Twice: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(1)
            try container.encode("two")
        }
    }

    struct SingleThenKeyed: Encodable {
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(1)
            var keyed = encoder.container(keyedBy: StreamKey.self)
            try keyed.encode(2, forKey: StreamKey("k"))
        }
    }

    struct Failing: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: StreamKey.self)
            try container.encode("partly", forKey: StreamKey("written"))
            throw EncodingError.invalidValue(0, .init(codingPath: encoder.codingPath, debugDescription: "refused"))
        }
    }

    init(id: String, order: Order) {
        self.id = id
        self.order = order
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: StreamKey.self)
        id = try container.decode(String.self, forKey: StreamKey("id"))
        order = .nestedInOrder
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: StreamKey.self)
        try container.encode(id, forKey: StreamKey("id"))
        switch order {
        case .emptyAndEscapedKeys:
            try container.encode(Empty(), forKey: StreamKey("empty"))
            try container.encode(1, forKey: StreamKey("a\"b"))
            _ = container.nestedUnkeyedContainer(forKey: StreamKey("é\n"))
            var nested = container.nestedContainer(keyedBy: StreamKey.self, forKey: StreamKey(""))
            try nested.encodeNil(forKey: StreamKey(""))
        case .nestedInOrder:
            var nested = container.nestedContainer(keyedBy: StreamKey.self, forKey: StreamKey("n"))
            try nested.encode(1, forKey: StreamKey("x"))
            var list = nested.nestedUnkeyedContainer(forKey: StreamKey("l"))
            try list.encode("a")
            var inner = list.nestedContainer(keyedBy: StreamKey.self)
            try inner.encode(true, forKey: StreamKey("t"))
            var innerList = list.nestedUnkeyedContainer()
            try innerList.encode(2.5)
            try list.encode(3)
            try nested.encode(2, forKey: StreamKey("y"))
            try container.encode("after", forKey: StreamKey("z"))
        case .nestedAfterParent:
            var nested = container.nestedContainer(keyedBy: StreamKey.self, forKey: StreamKey("n"))
            try container.encode("between", forKey: StreamKey("b"))
            try nested.encode(1, forKey: StreamKey("late"))
        case .unkeyedNestedAfterParent:
            var list = container.nestedUnkeyedContainer(forKey: StreamKey("l"))
            var first = list.nestedUnkeyedContainer()
            try list.encode("second")
            try first.encode("late")
        case .keyedThenUnkeyed:
            _ = encoder.unkeyedContainer()
        case .singleValueTwice:
            try container.encode(Twice(), forKey: StreamKey("t"))
        case .singleThenKeyed:
            try container.encode(SingleThenKeyed(), forKey: StreamKey("s"))
        case .keyTwice:
            try container.encode(1, forKey: StreamKey("a"))
            try container.encode(2, forKey: StreamKey("b"))
            try container.encode(3, forKey: StreamKey("a"))
        case .caughtError:
            try? container.encode(Failing(), forKey: StreamKey("failing"))
            try container.encode(true, forKey: StreamKey("after"))
        case .nan:
            var nested = container.nestedContainer(keyedBy: StreamKey.self, forKey: StreamKey("n"))
            try nested.encode(Float.nan, forKey: StreamKey("f"))
        }
    }
}

struct StreamNaNs: Codable, Identifiable {
    var id: String
    var values: [Double]
    var deep: [[Double]] = []
    var decimal: Decimal = 1
    var text = ""
}

struct StreamDeep: Codable, Identifiable {
    final class Box: Codable {
        let value: StreamDeep
        init(_ value: StreamDeep) { self.value = value }
    }
    var id: String
    var child: Box?
}

/// A random tree, encoded through every kind of container.
indirect enum StreamNode: Codable {
    case object([(String, StreamNode)])
    case array([StreamNode])
    case nestedObject([(String, StreamNode)])
    case number(Int)
    case text(String)
    case null

    var repeatsAKey: Bool {
        switch self {
        case .object(let members), .nestedObject(let members):
            Set(members.map(\.0)).count != members.count || members.contains { $0.1.repeatsAKey }
        case .array(let elements): elements.contains(where: \.repeatsAKey)
        case .number, .text, .null: false
        }
    }

    static func random(depth: Int, using generator: inout SplitMix64) -> StreamNode {
        let choice = depth > 4 ? 3 + Int(generator.next() % 3) : Int(generator.next() % 6)
        switch choice {
        case 0, 2:
            let keys = ["a", "b", "c", "d", "e", "f", "g", "h", "ab", "ba", "é", "\"", ""]
            let members = (0..<Int(generator.next() % 6)).map { _ in
                (keys[Int(generator.next() % UInt64(keys.count))], random(depth: depth + 1, using: &generator))
            }
            return choice == 0 ? .object(members) : .nestedObject(members)
        case 1:
            return .array((0..<Int(generator.next() % 5)).map { _ in random(depth: depth + 1, using: &generator) })
        case 3: return .number(Int(truncatingIfNeeded: generator.next()) >> Int(generator.next() % 64))
        case 4: return .text(String(repeating: "x\u{1}", count: Int(generator.next() % 3)))
        default: return .null
        }
    }

    init(from decoder: any Decoder) throws { self = .null }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let members):
            var container = encoder.container(keyedBy: StreamKey.self)
            for (key, value) in members { try container.encode(value, forKey: StreamKey(key)) }
        case .nestedObject(let members):
            // Each member through a nested container of its own where it is an object.
            var container = encoder.container(keyedBy: StreamKey.self)
            for (key, value) in members {
                if case .array(let elements) = value {
                    var nested = container.nestedUnkeyedContainer(forKey: StreamKey(key))
                    for element in elements { try nested.encode(element) }
                } else {
                    try container.encode(value, forKey: StreamKey(key))
                }
            }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .number(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .text(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        }
    }
}

struct StreamRoot: Codable, Identifiable {
    var id: String
    var node: StreamNode
}
