import Foundation
import Testing

// Models of the coding tests (Tests/GarageLiteTests/Coding/): values written through each kind
// of container, with keys present, null or absent, enums and nested collections. They are not
// from the test domain: each exists for the container calls its `Codable` code makes.

/// A person, parked as its own row when nested in another object.
struct CodingPerson: Codable, Identifiable, Equatable, Hashable {
    var id: String
    var name: String
}

// MARK: - Containers

/// A value written with a single-value container.
struct CodingLabel: Codable, Equatable {
    var text: String
    init(_ text: String) { self.text = text }
    init(from decoder: any Decoder) throws {
        text = try decoder.singleValueContainer().decode(String.self)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// A temperature written with a single-value container holding a Double.
struct CodingCelsius: Codable, Equatable {
    var degrees: Double
    init(_ degrees: Double) { self.degrees = degrees }
    init(from decoder: any Decoder) throws {
        degrees = try decoder.singleValueContainer().decode(Double.self)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(degrees)
    }
}

/// A value written as a JSON array through an unkeyed container at the top of its encoder.
struct CodingPoint: Codable, Equatable {
    var x: Int
    var y: Int
    init(x: Int, y: Int) { self.x = x; self.y = y }
    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        #expect(container.count == 2)
        x = try container.decode(Int.self)
        y = try container.decode(Int.self)
        #expect(container.isAtEnd)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(x)
        try container.encode(y)
    }
}

/// Writes its properties through nested keyed and unkeyed containers, at several depths.
struct CodingNested: Codable, Identifiable, Equatable {
    var id: String
    var x: Int
    var y: Int
    var unit: String
    var tags: [String]
    var matrix: [[Int]]
    var names: [String]
    var scores: [Int]
    var label: CodingLabel
    var temperature: CodingCelsius
    var corner: CodingPoint
    var friend: CodingPerson

    enum Keys: String, CodingKey { case id, position, tags, matrix, entries, label, temperature, corner, friend }
    enum PositionKeys: String, CodingKey { case x, y, meta }
    enum MetaKeys: String, CodingKey { case unit, friends }
    enum EntryKeys: String, CodingKey { case name, score }

    init(id: String, x: Int, y: Int, unit: String, tags: [String], matrix: [[Int]], names: [String],
         scores: [Int], label: CodingLabel, temperature: CodingCelsius, corner: CodingPoint, friend: CodingPerson) {
        self.id = id; self.x = x; self.y = y; self.unit = unit; self.tags = tags; self.matrix = matrix
        self.names = names; self.scores = scores; self.label = label; self.temperature = temperature
        self.corner = corner; self.friend = friend
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id)
        var position = container.nestedContainer(keyedBy: PositionKeys.self, forKey: .position)
        try position.encode(x, forKey: .x)
        var meta = position.nestedContainer(keyedBy: MetaKeys.self, forKey: .meta)
        // Written after the nested container was handed out: it must still land in the JSON.
        try position.encode(y, forKey: .y)
        try meta.encode(unit, forKey: .unit)
        var friends = meta.nestedUnkeyedContainer(forKey: .friends)
        try friends.encode(friend)           // an Identifiable deep inside nested containers
        var tagList = container.nestedUnkeyedContainer(forKey: .tags)
        for tag in tags { try tagList.encode(tag) }
        var rows = container.nestedUnkeyedContainer(forKey: .matrix)
        for row in matrix {
            var nestedRow = rows.nestedUnkeyedContainer()
            for value in row { try nestedRow.encode(value) }
        }
        var entries = container.nestedUnkeyedContainer(forKey: .entries)
        for (name, score) in zip(names, scores) {
            var entry = entries.nestedContainer(keyedBy: EntryKeys.self)
            try entry.encode(name, forKey: .name)
            try entry.encode(score, forKey: .score)
        }
        try container.encode(label, forKey: .label)
        try container.encode(temperature, forKey: .temperature)
        try container.encode(corner, forKey: .corner)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(String.self, forKey: .id)
        let position = try container.nestedContainer(keyedBy: PositionKeys.self, forKey: .position)
        x = try position.decode(Int.self, forKey: .x)
        y = try position.decode(Int.self, forKey: .y)
        let meta = try position.nestedContainer(keyedBy: MetaKeys.self, forKey: .meta)
        unit = try meta.decode(String.self, forKey: .unit)
        var friends = try meta.nestedUnkeyedContainer(forKey: .friends)
        friend = try friends.decode(CodingPerson.self)
        #expect(friends.isAtEnd)
        var tagList = try container.nestedUnkeyedContainer(forKey: .tags)
        var tags: [String] = []
        while !tagList.isAtEnd { tags.append(try tagList.decode(String.self)) }
        self.tags = tags
        var rows = try container.nestedUnkeyedContainer(forKey: .matrix)
        var matrix: [[Int]] = []
        while !rows.isAtEnd {
            var nestedRow = try rows.nestedUnkeyedContainer()
            var row: [Int] = []
            while !nestedRow.isAtEnd { row.append(try nestedRow.decode(Int.self)) }
            matrix.append(row)
        }
        self.matrix = matrix
        var entries = try container.nestedUnkeyedContainer(forKey: .entries)
        var names: [String] = [], scores: [Int] = []
        while !entries.isAtEnd {
            let entry = try entries.nestedContainer(keyedBy: EntryKeys.self)
            names.append(try entry.decode(String.self, forKey: .name))
            scores.append(try entry.decode(Int.self, forKey: .score))
        }
        self.names = names
        self.scores = scores
        label = try container.decode(CodingLabel.self, forKey: .label)
        temperature = try container.decode(CodingCelsius.self, forKey: .temperature)
        corner = try container.decode(CodingPoint.self, forKey: .corner)
    }

    static let sample = CodingNested(
        id: "n1", x: 3, y: -4, unit: "cm", tags: ["t1", "t2"], matrix: [[1, 2], [], [3]],
        names: ["a", "b"], scores: [10, 20], label: CodingLabel("hello"), temperature: CodingCelsius(21.5),
        corner: CodingPoint(x: 7, y: 8), friend: CodingPerson(id: "p1", name: "Sam"))
}

/// A root object that is a single JSON string: `Hashable`, so it is identified by content.
enum CodingColor: String, Codable, Hashable {
    case red, green
}

/// A root object written with a single-value container around an array.
struct CodingTagList: Codable, Hashable {
    var tags: [String]
    init(_ tags: [String]) { self.tags = tags }
    init(from decoder: any Decoder) throws {
        tags = try decoder.singleValueContainer().decode([String].self)
    }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(tags)
    }
}

// MARK: - Optional and absent keys

/// What a decoder told `CodingPresence` about its keys.
struct CodingPresenceReport: Equatable {
    var allKeys: Set<String> = []
    var containsPresent = false
    var containsNothing = false
    var containsMissing = true
    var ifPresentPresent: Int?
    var ifPresentNothing: Int? = -1
    var ifPresentMissing: Int? = -1
    var ifPresentNothingAsString: String? = "unset"
    var decodeNilPresent = true
    var decodeNilNothing = false
    var decodeNilMissing = "unset"
    var decodeMissing = "unset"
    var decodeNothing = "unset"
    var decodeOptionalNothing: Int? = -1
    var decodeOptionalMissing = "unset"
    // In the unkeyed "list": [1, null, 3]
    var listCount: Int?
    var listDecodeNilOnValue = true
    var listIndexAfterDecodeNilOnValue = -1
    var listFirst = 0
    var listDecodeNilOnNull = false
    var listIfPresentAfterNull: Int?
    var listIsAtEnd = false
    var listIfPresentAtEnd: Int? = -1
    var listDecodeNilAtEnd = "unset"
}

/// The kind of error `body` throws, as text, for a `CodingPresenceReport`.
func codingErrorKind(_ body: () throws -> Void) -> String {
    do {
        try body()
        return "no error"
    } catch DecodingError.keyNotFound {
        return "keyNotFound"
    } catch DecodingError.valueNotFound {
        return "valueNotFound"
    } catch DecodingError.typeMismatch {
        return "typeMismatch"
    } catch DecodingError.dataCorrupted {
        return "dataCorrupted"
    } catch {
        return "other: \(error)"
    }
}

/// Writes `present`, an explicit null for `nothing`, and omits `missing`; reports what its
/// decoder says about each.
struct CodingPresence: Codable, Identifiable {
    var id: String
    var present: Int
    var report = CodingPresenceReport()

    enum CodingKeys: String, CodingKey { case id, present, nothing, missing, list }

    init(id: String, present: Int) {
        self.id = id
        self.present = present
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(present, forKey: .present)
        try container.encodeNil(forKey: .nothing)
        let none: Int? = nil
        try container.encodeIfPresent(none, forKey: .missing)
        var list = container.nestedUnkeyedContainer(forKey: .list)
        try list.encode(1)
        try list.encodeNil()
        try list.encode(3)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        present = try container.decode(Int.self, forKey: .present)
        var report = CodingPresenceReport()
        report.allKeys = Set(container.allKeys.map(\.stringValue))
        report.containsPresent = container.contains(.present)
        report.containsNothing = container.contains(.nothing)
        report.containsMissing = container.contains(.missing)
        report.ifPresentPresent = try container.decodeIfPresent(Int.self, forKey: .present)
        report.ifPresentNothing = try container.decodeIfPresent(Int.self, forKey: .nothing)
        report.ifPresentMissing = try container.decodeIfPresent(Int.self, forKey: .missing)
        report.ifPresentNothingAsString = try container.decodeIfPresent(String.self, forKey: .nothing)
        report.decodeNilPresent = try container.decodeNil(forKey: .present)
        report.decodeNilNothing = try container.decodeNil(forKey: .nothing)
        report.decodeNilMissing = codingErrorKind { _ = try container.decodeNil(forKey: .missing) }
        report.decodeMissing = codingErrorKind { _ = try container.decode(Int.self, forKey: .missing) }
        report.decodeNothing = codingErrorKind { _ = try container.decode(Int.self, forKey: .nothing) }
        report.decodeOptionalNothing = try container.decode(Int?.self, forKey: .nothing)
        report.decodeOptionalMissing = codingErrorKind { _ = try container.decode(Int?.self, forKey: .missing) }

        var list = try container.nestedUnkeyedContainer(forKey: .list)
        report.listCount = list.count
        report.listDecodeNilOnValue = try list.decodeNil()
        report.listIndexAfterDecodeNilOnValue = list.currentIndex
        report.listFirst = try list.decode(Int.self)
        report.listDecodeNilOnNull = try list.decodeNil()
        report.listIfPresentAfterNull = try list.decodeIfPresent(Int.self)
        report.listIsAtEnd = list.isAtEnd
        report.listIfPresentAtEnd = try list.decodeIfPresent(Int.self)
        report.listDecodeNilAtEnd = codingErrorKind { _ = try list.decodeNil() }
        self.report = report
    }
}

// MARK: - Enums and collections

/// An enum with associated values (synthesized `Codable`), one of them a reference.
enum CodingShape: Codable, Equatable {
    case circle(radius: Double)
    case rectangle(Double, Double)
    case polygon(points: [[Double]], name: String?)
    case empty
    case drawnBy(CodingPerson)
}

/// Shapes in a property and in an array, and a `String` enum.
struct CodingDrawing: Codable, Identifiable, Equatable {
    var id: String
    var primary: CodingShape
    var shapes: [CodingShape]
    var color: CodingColor
}

/// Nested arrays and dictionaries (`String` and `Int` keys), optionals, a set, references by key.
struct CodingCollections: Codable, Identifiable, Equatable {
    var id: String
    var grid: [[Int]]
    var cube: [[[String]]]
    var ragged: [[Double]]
    var byName: [String: Int]
    var byNumber: [Int: String]
    var nestedMaps: [String: [Int: [String]]]
    var optionals: [Int?]
    var set: Set<String>
    var emptyMap: [String: Int]
    var emptyGrid: [[Int]]
    var peopleByNumber: [Int: CodingPerson]
}

// MARK: - Foundation interop

/// References in a property, an array and an optional, to compare with Foundation's coders.
struct CodingOwner: Codable, Identifiable, Equatable {
    var id: String
    var pet: CodingPerson
    var friends: [CodingPerson]
    var best: CodingPerson?
}
