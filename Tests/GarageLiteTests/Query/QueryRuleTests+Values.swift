import Foundation
import GarageLite
import Testing

// The values of `QueryRuleTests` (issue 42): strings from the whole of Unicode (controls,
// backslashes, quotes, the text "\u0041", combining characters, astral characters), dictionary
// keys that JSON writes with escapes or that look like JSON paths, numbers at the ends of
// `Double`, and `Tree`, a value of any JSON shape whose paths go six levels deep.
extension QueryRuleTests {
    /// A JSON value of any shape. It decodes through a single value container first, so that
    /// the store can't learn its shape (`QueryShape.unknown`): any path into it is accepted.
    indirect enum Tree: Codable, Sendable, Hashable {
        case object([Member]), array([Tree]), string(String), number(Double), bool(Bool), null

        /// One member of an object: an array of them, not a dictionary, so that the order and
        /// the bytes of the keys are the ones generated.
        struct Member: Sendable, Hashable {
            var key: String
            var value: Tree
        }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ stringValue: String) { self.stringValue = stringValue }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            if let single = try? decoder.singleValueContainer() {
                if single.decodeNil() { self = .null; return }
                if let flag = try? single.decode(Bool.self) { self = .bool(flag); return }
                if let number = try? single.decode(Double.self) { self = .number(number); return }
                if let text = try? single.decode(String.self) { self = .string(text); return }
            }
            if let keyed = try? decoder.container(keyedBy: Key.self) {
                self = .object(try keyed.allKeys.map { Member(key: $0.stringValue, value: try keyed.decode(Tree.self, forKey: $0)) })
                return
            }
            var list = try decoder.unkeyedContainer()
            var elements: [Tree] = []
            while !list.isAtEnd { elements.append(try list.decode(Tree.self)) }
            self = .array(elements)
        }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .object(let members):
                var container = encoder.container(keyedBy: Key.self)
                for member in members { try container.encode(member.value, forKey: Key(member.key)) }
            case .array(let elements):
                var container = encoder.unkeyedContainer()
                for element in elements { try container.encode(element) }
            case .string(let text):
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case .number(let number):
                var container = encoder.singleValueContainer()
                try container.encode(number)
            case .bool(let flag):
                var container = encoder.singleValueContainer()
                try container.encode(flag)
            case .null:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            }
        }

        /// What the path holds, keys compared by their bytes (`"é"` and `"e\u{301}"` are two keys).
        func walk(_ path: ArraySlice<String>) -> Value {
            guard let key = path.first else { return value }
            guard case .object(let members) = self,
                  let member = members.first(where: { $0.key.utf8.elementsEqual(key.utf8) }) else { return .missing }
            return member.value.walk(path.dropFirst())
        }

        var value: Value {
            switch self {
            case .object: return .object
            case .array(let elements): return .array(elements.map(\.value))
            case .string(let text): return .string(text)
            case .number(let number): return .number(number)
            case .bool(let flag): return .bool(flag)
            case .null: return .null
            }
        }
    }

    /// Whether keys that Swift's `String` holds equal but whose bytes differ (`"é"` and
    /// `"e\u{301}"`) are drawn side by side: they are two keys, found by their bytes. On unless
    /// `GARAGE_QUERY_EQUIVALENT_KEYS=0`.
    static let equivalentKeys = ProcessInfo.processInfo.environment["GARAGE_QUERY_EQUIVALENT_KEYS"] != "0"

    /// `text` as a key: composed (NFC) unless ``equivalentKeys``.
    static func key(_ text: String) -> String {
        equivalentKeys ? text : text.precomposedStringWithCanonicalMapping
    }

    /// Keys that JSON writes with escapes, that look like JSON paths or SQL patterns, and pairs
    /// that Swift's `String` holds equal but whose bytes differ (`"é"` and `"e\u{301}"`, `"K"` and
    /// the Kelvin sign): the store compares keys by their bytes.
    static let awkwardKeys = ["back\\slash", "new\nline", "tab\t", "\u{1}", "\u{1F}x", "\\u0041", "A", "quo\"te", "a.b", "$",
                              "$[0]", "[0]", "*", "é", "e\u{301}", "K", "\u{212A}", "emoji 🎉", "𝄞", "", " ", "'", "%_",
                              "\u{7F}", "\u{2028}", "title", "é\u{301}"]

    /// The keys of `Tree`'s objects: fewer, so that random paths find values.
    static let treeKeys = ["a", "a.b", "é", "e\u{301}", "", "\\u0041", "A", "new\nline", "$[0]", "K", "\u{212A}", "🎉"]

    /// A Unicode scalar of any kind but U+0000 and the surrogates (which no `String` holds).
    static func randomScalar(_ random: inout SplitMix64) -> Unicode.Scalar {
        func scalar(_ range: ClosedRange<UInt32>) -> Unicode.Scalar {
            while true {
                if let scalar = Unicode.Scalar(UInt32.random(in: range, using: &random)) { return scalar }
            }
        }
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return Bool.random(using: &random) ? scalar(0x01...0x1F) : "\u{7F}"
        case 1: return "\\\"'.$[]*%_/".unicodeScalars.randomElement(using: &random)!
        case 2: return scalar(0x300...0x36F)            // combining marks
        case 3: return scalar(0x80...0x24F)             // Latin-1 and Latin Extended, C1 controls
        case 4: return scalar(0x250...0xFFFF)           // the rest of the BMP (the surrogates are skipped)
        case 5: return scalar(0x1F300...0x1FAFF)        // emoji
        case 6: return scalar(0x10000...0x10FFFF)       // astral, assigned or not
        case 7: return "eEéÉaAzZkK".unicodeScalars.randomElement(using: &random)!
        default: return scalar(0x20...0x7E)
        }
    }

    static func randomText(_ random: inout SplitMix64) -> String {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return awkwardKeys.randomElement(using: &random)!
        case 1: return words.randomElement(using: &random)!
        case 2: return ["\\u0041", "\\", "\\\\", "\"", "\\n", "\u{E9}", "e\u{301}", "\u{2028}\u{2029}", "\u{FEFF}", "\u{FFFF}"]
            .randomElement(using: &random)!
        default:
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...6, using: &random) { scalars.append(randomScalar(&random)) }
            return String(scalars)
        }
    }

    /// The strings the notes hold: drawn once, so that notes share values and operands find them.
    static let strings: [String] = {
        var random = SplitMix64(state: 0x5374_7269_6E67)
        return (0..<48).map { _ in randomText(&random) } + ["A", "a", "é", "e\u{301}", "\\u0041", "K", "\u{212A}"]
    }()

    /// A string the notes may hold: one of ``strings`` mostly, sometimes a new one.
    static func randomString(_ random: inout SplitMix64) -> String {
        Int.random(in: 0..<4, using: &random) == 0 ? randomText(&random) : strings.randomElement(using: &random)!
    }

    /// Numbers as they come, and some at the ends of `Double`.
    static func randomNumber(_ random: inout SplitMix64) -> Double {
        if Int.random(in: 0..<6, using: &random) == 0 {
            return [0.1, -0.0, 0.30000000000000004, 1e300, -1e300, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -.leastNormalMagnitude,
                    9_007_199_254_740_992, -9_007_199_254_740_992, 123_456.789, 1e-7].randomElement(using: &random)!
        }
        return Double(Int.random(in: -4...4, using: &random)) / 2
    }

    static func randomTree(_ random: inout SplitMix64, depth: Int = 0) -> Tree {
        let roll = Int.random(in: 0..<10, using: &random)
        if depth < 5, roll < 5 {
            var members: [Tree.Member] = []
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                let key = Self.key(Int.random(in: 0..<6, using: &random) == 0 ? awkwardKeys.randomElement(using: &random)!
                    : treeKeys.randomElement(using: &random)!)
                // One object holds no two keys Swift's `String` holds equal: the encoder writes
                // such keys once (a key encoded twice), as a `Dictionary` would hold them.
                guard !members.contains(where: { $0.key == key }) else { continue }
                members.append(Tree.Member(key: key, value: randomTree(&random, depth: depth + 1)))
            }
            return .object(members)
        }
        switch roll {
        case 5, 6: return .string(randomString(&random))
        case 7: return .number(randomNumber(&random))
        case 8: return Bool.random(using: &random) ? .bool(Bool.random(using: &random)) : .null
        default:
            return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in
                switch Int.random(in: 0..<5, using: &random) {
                case 0: return .string(randomString(&random))
                case 1: return .number(randomNumber(&random))
                case 2: return .bool(Bool.random(using: &random))
                case 3: return .null
                default: return depth < 5 ? randomTree(&random, depth: depth + 1) : .null
                }
            })
        }
    }

    /// `text` with U+0000 somewhere in it.
    static func withNul(_ text: String, _ random: inout SplitMix64) -> String {
        var scalars = Array(text.unicodeScalars)
        scalars.insert("\u{0}", at: Int.random(in: 0...scalars.count, using: &random))
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    /// The first `count` Unicode scalars of `text`: a prefix by bytes too, which may end
    /// between a letter and its combining mark.
    static func scalarPrefix(_ text: String, _ count: Int) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: text.unicodeScalars.prefix(count))
        return String(view)
    }

    /// Scalars `range` of `text`, ASCII letters in random case.
    static func scalarSlice(_ text: String, _ random: inout SplitMix64) -> String {
        let scalars = Array(text.unicodeScalars)
        let start = Int.random(in: 0...scalars.count, using: &random)
        let end = Int.random(in: start...scalars.count, using: &random)
        var view = String.UnicodeScalarView()
        for scalar in scalars[start..<end] {
            let value = scalar.value
            if (65...90).contains(value) || (97...122).contains(value), Bool.random(using: &random) {
                view.append(Unicode.Scalar(value ^ 0x20)!)
            } else {
                view.append(scalar)
            }
        }
        return String(view)
    }
}
