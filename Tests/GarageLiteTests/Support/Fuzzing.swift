import Foundation
import PropertyBased
import Testing

/// How many cases the fuzz tests run, and from which seed: fixed by default, so that a failure
/// comes back on the next run.
///
/// - `GARAGE_FUZZ_CASES`: cases per fuzz test (each test has a small default, for a fast suite).
/// - `GARAGE_FUZZ_SEED`: the base seed, decimal or `0x` hex.
/// - `GARAGE_FUZZ_CASE`: run this case only, to reproduce a failure.
/// - `GARAGE_FUZZ_TRACE=1`: write each case to standard error before running it, to find the
///   case that crashed or hung the process.
enum Fuzzing {
    private static let environment = ProcessInfo.processInfo.environment

    static let seed: UInt64 = environment["GARAGE_FUZZ_SEED"].flatMap(parseSeed) ?? 0x4761_7261_6765_4C69

    private static let onlyCase = environment["GARAGE_FUZZ_CASE"].flatMap { Int($0) }
    private static let trace = environment["GARAGE_FUZZ_TRACE"] == "1"

    static var seedText: String { "0x" + String(seed, radix: 16) }

    private static func parseSeed(_ text: String) -> UInt64? {
        if text.hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) }
        return UInt64(text)
    }

    /// The cases of one test: `0..<count`, `count` from `GARAGE_FUZZ_CASES` or `defaultCount`.
    static func cases(default defaultCount: Int) -> [Int] {
        if let onlyCase { return [onlyCase] }
        let count = environment["GARAGE_FUZZ_CASES"].flatMap { Int($0) } ?? defaultCount
        return Array(0..<max(0, count))
    }

    /// The random source of one case: a function of the base seed, the test and the case only.
    static func random(_ test: String, case index: Int) -> Xoshiro {
        // FNV-1a, not `Hasher`: the state must be the same in every process.
        var state = test.utf8.reduce(UInt64(0xCBF2_9CE4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
        state ^= seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
        func splitMix() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return Xoshiro(seed: (splitMix(), splitMix(), splitMix(), splitMix()))
    }

    /// Says which case fails and how to run it alone.
    static func reproduction(_ test: String, case index: Int, _ detail: @autoclosure () -> String = "") -> Comment {
        let detail = detail()
        return Comment(rawValue: "\(test), case \(index) of seed \(seedText)\(detail.isEmpty ? "" : ": \(detail)"). "
            + "Run it alone: GARAGE_FUZZ_SEED=\(seedText) GARAGE_FUZZ_CASE=\(index) swift test --filter FuzzTests")
    }

    static func willRun(_ test: String, case index: Int) {
        guard trace else { return }
        FileHandle.standardError.write(Data("fuzz \(test) case \(index) seed \(seedText)\n".utf8))
    }
}

/// One edit of a byte string. Positions and lengths are taken modulo the string's length
/// when applied, so that one generated mutation applies to any input.
enum ByteMutation: Sendable, CustomStringConvertible {
    case flipBit(position: Int, bit: Int)
    case setByte(position: Int, value: UInt8)
    case insert(position: Int, bytes: [UInt8])
    case delete(position: Int, count: Int)
    case duplicate(position: Int, count: Int, times: Int)
    case truncate(position: Int)
    /// Inserts a slice of another document (`donor`, modulo the donors' count).
    case splice(donor: Int, from: Int, count: Int, position: Int)
    /// Inserts one of ``tokens``.
    case insertToken(position: Int, token: Int)

    var description: String {
        switch self {
        case let .flipBit(position, bit): return "flipBit(\(position), \(bit))"
        case let .setByte(position, value): return "setByte(\(position), \(value))"
        case let .insert(position, bytes): return "insert(\(position), \(bytes))"
        case let .delete(position, count): return "delete(\(position), \(count))"
        case let .duplicate(position, count, times): return "duplicate(\(position), \(count), ×\(times))"
        case let .truncate(position): return "truncate(\(position))"
        case let .splice(donor, from, count, position): return "splice(donor \(donor), \(from), \(count), at \(position))"
        case let .insertToken(position, token): return "insertToken(\(position), \(Self.tokens[token % Self.tokens.count]))"
        }
    }

    /// Fragments that reach the reader's edge cases: surrogates, NUL, invalid UTF-8, huge
    /// numbers, deep nesting, broken escapes and structure.
    static let tokens: [[UInt8]] = [
        Array(#"\uD800"#.utf8), Array(#"\uDC00"#.utf8), Array(#"\uD800\u0041"#.utf8), Array(#"\uDBFF\uDFFF"#.utf8),
        Array(#"\uD800\"#.utf8), Array(#"\u0000"#.utf8), Array(#"\u12"#.utf8), Array(#"\x"#.utf8), [0x00],
        [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xF0, 0x9F, 0x98, 0x80],
        Array("1e999999999".utf8), Array("-0".utf8), Array("-".utf8), Array("0.".utf8), Array("1e".utf8),
        Array("00".utf8), Array("18446744073709551616".utf8), Array(String(repeating: "9", count: 400).utf8),
        Array("null".utf8), Array("true".utf8), Array("nul".utf8), Array("\"\"".utf8), Array("\"".utf8),
        Array("\\".utf8), Array("{".utf8), Array("}".utf8), Array("[".utf8), Array("]".utf8), Array(",".utf8),
        Array(":".utf8), Array("{\"\":".utf8), Array(String(repeating: "[", count: 600).utf8),
        Array(String(repeating: "{\"a\":", count: 600).utf8), Array(" \t\r\n".utf8), [0x0C], [0xEF, 0xBB, 0xBF],
    ]

    func apply(to bytes: inout [UInt8], donors: [[UInt8]]) {
        func at(_ position: Int) -> Int { position % (bytes.count + 1) }
        func existing(_ position: Int) -> Int? { bytes.isEmpty ? nil : position % bytes.count }
        switch self {
        case let .flipBit(position, bit):
            if let index = existing(position) { bytes[index] ^= 1 << UInt8(bit % 8) }
        case let .setByte(position, value):
            if let index = existing(position) { bytes[index] = value }
        case let .insert(position, inserted):
            bytes.insert(contentsOf: inserted, at: at(position))
        case let .delete(position, count):
            let start = at(position)
            bytes.removeSubrange(start..<min(bytes.count, start + count))
        case let .duplicate(position, count, times):
            let start = at(position)
            let slice = bytes[start..<min(bytes.count, start + count)]
            bytes.insert(contentsOf: Array(repeatElement(slice, count: times).joined()), at: start)
        case let .truncate(position):
            bytes.removeSubrange(at(position)...)
        case let .splice(donor, from, count, position):
            guard !donors.isEmpty else { return }
            let source = donors[donor % donors.count]
            let start = from % (source.count + 1)
            bytes.insert(contentsOf: source[start..<min(source.count, start + count)], at: at(position))
        case let .insertToken(position, token):
            bytes.insert(contentsOf: Self.tokens[token % Self.tokens.count], at: at(position))
        }
    }
}

/// The generators of the fuzz tests, from PropertyBased.
enum FuzzGen {
    private static let position = Gen.int(in: 0...1_000_000)
    private static let length = Gen.int(in: 1...64)

    static let mutation = Gen.frequency(
        (3, zip(position, Gen.int(in: 0...7)).map { ByteMutation.flipBit(position: $0, bit: $1) }),
        (2, zip(position, Gen.uint8()).map { ByteMutation.setByte(position: $0, value: $1) }),
        (2, zip(position, Gen.uint8().array(of: 1...8)).map { ByteMutation.insert(position: $0, bytes: $1) }),
        (2, zip(position, length).map { ByteMutation.delete(position: $0, count: $1) }),
        (1, zip(position, length, Gen.int(in: 1...4)).map { ByteMutation.duplicate(position: $0.0, count: $0.1, times: $0.2) }),
        (1, position.map { ByteMutation.truncate(position: $0) }),
        (1, zip(Gen.int(in: 0...1000), position, Gen.int(in: 1...200), position)
            .map { ByteMutation.splice(donor: $0.0, from: $0.1, count: $0.2, position: $0.3) }),
        (2, zip(position, Gen.int(in: 0..<ByteMutation.tokens.count))
            .map { ByteMutation.insertToken(position: $0, token: $1) })
    )

    /// One to six stacked mutations: most inputs stay close to valid JSON, some drift far.
    static let mutations = mutation.array(of: 1...6)

    /// Bytes of any value, or mostly JSON's own characters, up to 128 of them.
    static let randomBytes = Gen.frequency(
        (1, Gen.uint8().array(of: 0...128)),
        (2, Gen.element(of: Array(#"{}[]",:"\ 0123456789-+.eEtrufalsn\u"#.utf8) + [0x00, 0x80, 0xC3, 0xFF])
            .map { $0 ?? 0x20 }.array(of: 0...128))
    )
}

extension Generator {
    /// A value drawn from `random`: the case's own seeded source, not a fresh random one.
    func draw(_ random: inout Xoshiro) -> ResultValue {
        run(using: &random)
    }
}

extension Comment {
    /// `detail`, followed by this comment (the case, and how to run it alone).
    func with(_ detail: String) -> Comment {
        Comment(rawValue: "\(detail). \(rawValue)")
    }
}
