import Foundation
import Testing
@testable import GarageLite

/// The document the graph decoder reads rows from (``JSONDocument``): its values read where
/// they are agree with the tree the same bytes parse to, at every length and position the
/// reader's eight-bytes-at-a-time string scan can meet.
@Suite("Coding: reading values where they are in a row's bytes")
struct JSONDocumentTests {
    @Test func stringsReadAtEveryLengthAndPositionOfASpecialCharacter() throws {
        for length in 0...24 {
            let plain = String(repeating: "a", count: length)
            try expectString(#""\#(plain)""#, plain)
            for position in 0...length {
                let before = String(plain.prefix(position)), after = String(plain.dropFirst(position))
                try expectString(#""\#(before)\"\#(after)""#, before + "\"" + after)
                try expectString(#""\#(before)\\\#(after)""#, before + "\\" + after)
                try expectString(#""\#(before)é\#(after)""#, before + "é" + after)
                try expectString(#""\#(before)\u00e9\#(after)""#, before + "é" + after)
                let control = Array(#""\#(before)"#.utf8) + [0x01] + Array(#"\#(after)""#.utf8)
                #expect(throws: JSONReader.Failure.self, "control character at \(position) of \(length)") {
                    try JSONDocument(parsing: control)
                }
                let invalid = Array(#""\#(before)"#.utf8) + [0xC3] + Array(#"\#(after)""#.utf8)
                #expect(throws: JSONReader.Failure.self, "lone UTF-8 lead byte at \(position) of \(length)") {
                    try JSONDocument(parsing: invalid)
                }
            }
        }
    }

    @Test func stringsWrittenAtEveryLengthAndPositionOfASpecialCharacterReadBack() throws {
        for length in 0...24 {
            let plain = String(repeating: "a", count: length)
            #expect(JSONWriter.string(from: .string(plain)) == "\"\(plain)\"")
            for position in 0...length {
                for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}", "é", "🦊", " "] {
                    let text = String(plain.prefix(position)) + special + String(plain.dropFirst(position))
                    let written = JSONWriter.string(from: .string(text))
                    #expect(try JSONReader.parse(written) == .string(text), "\(written)")
                    // Only what JSON requires is escaped.
                    #expect(written.contains("\\") == (special.unicodeScalars.first!.value < 0x20 || special == "\"" || special == "\\"),
                            "\(written)")
                }
            }
        }
    }

    private func expectString(_ json: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let root = try JSONDocument(parsing: json).root
        #expect(root.stringValue == expected, "\(json)", sourceLocation: sourceLocation)
        // As a key too, looked up by its value.
        let object = try JSONDocument(parsing: "{\(json):1}").root
        #expect(object.member(expected)?.numberText == "1", "\(json) as a key", sourceLocation: sourceLocation)
    }

    @Test func membersAreFoundByKeyTheFirstOneWhenRepeated() throws {
        let root = try JSONDocument(parsing: #"{"a":1,"b":{"c":[1,[2,3],{"d":null}]},"k\u0065y":true,"a":2}"#).root
        #expect(root.member("a")?.numberText == "1")
        #expect(root.member("key")?.bool == true)
        #expect(root.member("missing") == nil)
        let c = try #require(root.member("b")?.member("c"))
        #expect(c.count == 3)
        #expect(c.elements.map(\.kindName) == ["a number", "an array", "an object"])
        #expect(c.elements[2].member("d")?.isNull == true)
        // Reading past a nested container lands on the next member.
        #expect(root.members.map { $0.key.stringValue } == ["a", "b", "key", "a"])
        #expect(try JSONDocument(parsing: "[]").root.elements.isEmpty)
        #expect(try JSONDocument(parsing: "{}").root.member("a") == nil)
        #expect(try JSONDocument(parsing: "7").root.member("a") == nil)
    }

    @Test func integersAreReadFromTheBytesOrLeftToTheirText() throws {
        func integer<I: FixedWidthInteger>(_ text: String, _ type: I.Type) throws -> I? {
            try JSONDocument(parsing: text).root.integer(I.self)
        }
        #expect(try integer("-9223372036854775808", Int64.self) == Int64.min)
        #expect(try integer("9223372036854775807", Int64.self) == Int64.max)
        #expect(try integer("9223372036854775808", Int64.self) == nil)
        #expect(try integer("18446744073709551615", UInt64.self) == UInt64.max)
        #expect(try integer("-1", UInt8.self) == nil)
        #expect(try integer("256", UInt8.self) == nil)
        #expect(try integer("-0", Int.self) == 0)
        #expect(try integer("3.0", Int.self) == nil)
        #expect(try integer("\"3\"", Int.self) == nil)
        // The decoder reads what the fast path leaves, from the text.
        #expect(try Int.decode(from: JSONDocument(parsing: "3.0").root, codingPath: .root) == 3)
        #expect(try Int.decode(from: JSONDocument(parsing: "1e3").root, codingPath: .root) == 1000)
        #expect(throws: DecodingError.self) { try Int8.decode(from: JSONDocument(parsing: "128").root, codingPath: .root) }
    }

    @Test func numbersReadFromTheirDigitsAreTheNumbersTheirTextIs() throws {
        let test = "numbersReadFromTheirDigitsAreTheNumbersTheirTextIs"
        var fast = 0
        for index in Fuzzing.cases(default: 20_000) {
            var random = Fuzzing.random(test, case: index)
            let digits = (0..<Int.random(in: 1...18, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }
            var text = (Bool.random(using: &random) ? "-" : "") + digits.joined()
            if text.hasPrefix("0") || text.hasPrefix("-0"), digits.count > 1 { text = text.replacingOccurrences(of: "0", with: "1") }
            if Bool.random(using: &random), digits.count > 1 {
                let point = text.index(text.endIndex, offsetBy: -Int.random(in: 1..<digits.count, using: &random))
                text.insert(".", at: point)
            }
            if Bool.random(using: &random) { text += "e\(Int.random(in: -30...30, using: &random))" }
            let node = try JSONDocument(parsing: text).root
            let double = try Double.decode(from: node, codingPath: .root)
            #expect(double.bitPattern == Double(text)!.bitPattern, Fuzzing.reproduction(test, case: index, text))
            if Float(text)!.isFinite {
                let float = try Float.decode(from: node, codingPath: .root)
                #expect(float.bitPattern == Float(text)!.bitPattern, Fuzzing.reproduction(test, case: index, text))
            } else {
                #expect(throws: DecodingError.self, Fuzzing.reproduction(test, case: index, text)) {
                    try Float.decode(from: node, codingPath: .root)
                }
            }
            if node.exactDouble != nil { fast += 1 }
        }
        // Both paths ran.
        #expect(fast > 0)
        #expect(fast < Fuzzing.cases(default: 20_000).count)
    }

    @Test func randomDocumentsReadAsTheTreesTheyWereWrittenFrom() throws {
        let test = "randomDocumentsReadAsTheTreesTheyWereWrittenFrom"
        for index in Fuzzing.cases(default: 500) {
            var random = Fuzzing.random(test, case: index)
            let value = Self.randomValue(depth: 0, using: &random)
            let document = try JSONDocument(parsing: JSONWriter.bytes(from: value))
            #expect(document.root.value == value, Fuzzing.reproduction(test, case: index))
            try Self.expectNodes(document.root, match: value, Fuzzing.reproduction(test, case: index))
        }
    }

    /// Every accessor of `node` agrees with `value`, all the way down.
    private static func expectNodes(_ node: JSONNode, match value: JSONValue, _ comment: Comment) throws {
        switch value {
        case .null: #expect(node.isNull, comment)
        case .bool(let flag): #expect(node.bool == flag, comment)
        case .number(let text): #expect(node.numberText == text, comment)
        case .string(let text): #expect(node.stringValue == text, comment)
        case .array(let elements):
            #expect(node.count == elements.count, comment)
            for (element, expected) in zip(node.elements, elements) {
                try expectNodes(element, match: expected, comment)
            }
        case .object(let members):
            #expect(node.memberCount == members.count, comment)
            for member in members {
                let found = try #require(node.member(member.key), comment)
                // The first member of that key.
                try expectNodes(found, match: members.first { $0.key == member.key }!.value, comment)
            }
        }
    }

    private static func randomValue(depth: Int, using random: inout some RandomNumberGenerator) -> JSONValue {
        let pieces = ["a", "é", "\"", "\\", "\n", "\u{1}", "🦊", "key", "0123456789", " "]
        func text() -> String {
            (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }
        switch Int.random(in: 0..<(depth < 5 ? 7 : 4), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2:
            let numbers = ["0", "-0", "12", "-9223372036854775808", "18446744073709551615", "3.25", "1e-7", "-2E+300"]
            return .number(numbers.randomElement(using: &random)!)
        case 3: return .string(text())
        case 4, 5:
            return .array((0..<Int.random(in: 0...5, using: &random)).map { _ in randomValue(depth: depth + 1, using: &random) })
        default:
            return .object((0..<Int.random(in: 0...20, using: &random)).map { _ in
                JSONMember(key: text(), value: randomValue(depth: depth + 1, using: &random))
            })
        }
    }

    @Test func arraysOfScalarsRoundTripAndNameTheElementThatFails() throws {
        let garage = try TestEngine.garage()
        let lists = ScalarLists(id: "l", strings: ["", "a", "é🦊", "x\"y"], integers: [Int.min, 0, Int.max],
                                doubles: [-1.5, 0, 1e300], flags: [true, false], statuses: [.synced, .notSynced],
                                nested: [["a"], [], ["b", "c"]], bytes: [0, 255])
        try garage.park(lists)
        #expect(try garage.retrieve(ScalarLists.self, identifier: "l") == lists)

        _ = try garage.importRecords([ObjectRecord(
            key: ObjectKey(typeName: Identity.typeName(ScalarLists.self), identifier: "bad"),
            json: #"{"id":"bad","strings":[],"integers":[1,2],"doubles":[],"flags":[],"statuses":[],"#
                + #""nested":[],"bytes":[1,256]}"#)])
        let error = try #require(throws: DecodingError.self) { try garage.retrieve(ScalarLists.self, identifier: "bad") }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(error)")
            return
        }
        #expect(codingKeyNames(context.codingPath) == ["bytes", "Index 1"])
        #expect(context.debugDescription.contains("does not fit in UInt8"))
    }
}

private struct ScalarLists: Codable, Identifiable, Equatable {
    var id: String
    var strings: [String]
    var integers: [Int]
    var doubles: [Double]
    var flags: [Bool]
    var statuses: [SyncStatus]
    var nested: [[String]]
    var bytes: [UInt8]
}
