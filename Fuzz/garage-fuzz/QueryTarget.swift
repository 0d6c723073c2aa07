import Foundation
import GarageLite

// The `query` target: the input's bytes decode into a few objects (nested values of any shape,
// arrays, a dictionary with awkward keys, strings from the whole of Unicode) and a query built
// from random expressions (every kind of condition, nested `&&`, `||`, `!`, `.all`, `.any`,
// `isIn` lists, orders by fields and by modification date, a limit, pages after cursors). The
// query runs on a garage in a temporary directory (SQLite's SQL) and on a garage holding the
// same objects unsaved (the store's rule), and each answer must equal what this file's judge
// computes from the Swift values by the README's semantics. A disagreement, an error other than
// `GarageError.invalidQuery` (or a refusal of a query that had nothing to refuse) is a crash.

/// The object the target stores: its `tree` decodes through a single value container first,
/// so that any path into it is accepted.
struct FuzzQueryNote: Codable, Identifiable, Sendable {
    var id: String
    var title: String?
    var rank: Double?
    var flag: Bool?
    var tags: [String] = []
    var attrs: [String: String] = [:]
    var tree: FuzzTree?
}

indirect enum FuzzTree: Codable, Sendable {
    case object([(key: String, value: FuzzTree)]), array([FuzzTree]), string(String), number(Double), bool(Bool), null

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
            self = .object(try keyed.allKeys.map { (key: $0.stringValue, value: try keyed.decode(FuzzTree.self, forKey: $0)) })
            return
        }
        var list = try decoder.unkeyedContainer()
        var elements: [FuzzTree] = []
        while !list.isAtEnd { elements.append(try list.decode(FuzzTree.self)) }
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

    /// Whether a string or a key in it holds U+0000.
    var holdsNul: Bool {
        switch self {
        case .object(let members): return members.contains { $0.key.unicodeScalars.contains("\u{0}") || $0.value.holdsNul }
        case .array(let elements): return elements.contains(where: \.holdsNul)
        case .string(let text): return text.unicodeScalars.contains("\u{0}")
        default: return false
        }
    }
}

/// The input, read a byte at a time (zeros once it runs out).
struct FuzzBytes {
    let bytes: [UInt8]
    var index = 0

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(byte()) % range.count
    }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    static let texts = ["", " ", "a", "A", "b", "milk", "Milk", "MILK", "mi", "é", "e\u{301}", "É", "été", "K", "\u{212A}",
                        "back\\slash", "new\nline", "tab\t", "\u{1}", "\u{1F}x", "\u{7F}", "\\u0041", "quo\"te", "'", "a.b",
                        "$", "$[0]", "[0]", "*", "%_", "%", "_", "🎉", "𝄞", "\u{2028}", "\u{FEFF}", "\u{FFFF}", "10", "9",
                        "a\u{0}b", "\u{0}"]

    /// A string: one of ``texts``, or the next bytes as UTF-8 (invalid sequences replaced).
    mutating func string() -> String {
        let first = byte()
        if first < 192 { return Self.texts[Int(first) % Self.texts.count] }
        let count = min(Int(first - 192), bytes.count - index)
        var raw: [UInt8] = []
        for _ in 0..<max(0, count) { raw.append(byte()) }
        return String(decoding: raw, as: UTF8.self)
    }

    /// Whether keys that Swift's `String` holds equal but whose bytes differ (`"é"` and
    /// `"e\u{301}"`) may stand side by side: they are two keys, found by their bytes. On unless
    /// GARAGE_FUZZ_QUERY_EQUIVALENT_KEYS=0.
    static let equivalentKeys = ProcessInfo.processInfo.environment["GARAGE_FUZZ_QUERY_EQUIVALENT_KEYS"] != "0"

    /// A key of a dictionary, of an object, or of a path.
    mutating func key() -> String {
        let text = string()
        return Self.equivalentKeys ? text : text.precomposedStringWithCanonicalMapping
    }

    static let numbers: [Double] = [0, 1, -1, 0.5, -0.5, 2, 0.1, -0.0, 1e300, -1e300, .leastNonzeroMagnitude, 9_007_199_254_740_992,
                                    1.7976931348623157e308, 123_456.789]

    mutating func number() -> Double {
        let first = byte()
        if first < 200 { return first < 100 ? Double(Int(first) - 50) / 4 : Self.numbers[Int(first) % Self.numbers.count] }
        var bits: UInt64 = 0
        for _ in 0..<8 { bits = bits << 8 | UInt64(byte()) }
        let number = Double(bitPattern: bits)
        return number.isFinite ? number : 0
    }

    mutating func tree(depth: Int = 0) -> FuzzTree {
        let kind = byte() % 8
        switch depth < 6 ? kind : kind | 2 {
        case 0, 1:
            var members: [(key: String, value: FuzzTree)] = []
            for _ in 0..<int(0...3) {
                let name = key()
                // Swift holds canonically equivalent keys equal: an object holds one of them.
                guard !members.contains(where: { $0.key == name }) else { continue }
                members.append((name, tree(depth: depth + 1)))
            }
            return .object(members)
        case 2: return .array(depth < 6 ? (0..<int(0...3)).map { _ in tree(depth: depth + 1) } : [])
        case 3, 4: return .string(string())
        case 5: return .number(number())
        case 6: return .bool(bool())
        default: return .null
        }
    }
}

/// What a path holds, by the README's semantics.
enum FuzzValue {
    case missing, null, bool(Bool), number(Double), string(String), array([FuzzValue]), object

    init(_ tree: FuzzTree) {
        switch tree {
        case .object: self = .object
        case .array(let elements): self = .array(elements.map(FuzzValue.init))
        case .string(let text): self = .string(text)
        case .number(let number): self = .number(number)
        case .bool(let flag): self = .bool(flag)
        case .null: self = .null
        }
    }

    var rank: Int {
        switch self {
        case .missing, .null: return 0
        case .bool: return 1
        case .number: return 2
        case .string: return 3
        case .array, .object: return 4
        }
    }

    static func bytes(_ left: String, _ right: String) -> ComparisonResult {
        left.utf8.lexicographicallyPrecedes(right.utf8) ? .orderedAscending
            : right.utf8.lexicographicallyPrecedes(left.utf8) ? .orderedDescending : .orderedSame
    }

    /// How it compares with an operand: `nil` when of another kind.
    func compare(_ operand: FuzzOperand) -> ComparisonResult? {
        switch (self, operand) {
        case (.string(let left), .string(let right)): return Self.bytes(left, right)
        case (.number(let left), .number(let right)): return left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
        case (.bool(let left), .bool(let right)): return left == right ? .orderedSame : left ? .orderedDescending : .orderedAscending
        default: return nil
        }
    }

    /// The order of a sort: rank, then value.
    func sortCompare(_ other: FuzzValue) -> ComparisonResult {
        if rank != other.rank { return rank < other.rank ? .orderedAscending : .orderedDescending }
        switch (self, other) {
        case (.bool, _), (.number, _), (.string, _):
            switch other {
            case .bool(let flag): return compare(.bool(flag)) ?? .orderedSame
            case .number(let number): return compare(.number(number)) ?? .orderedSame
            case .string(let text): return compare(.string(text)) ?? .orderedSame
            default: return .orderedSame
            }
        default: return .orderedSame
        }
    }
}

enum FuzzOperand: CustomStringConvertible {
    case string(String), number(Double), bool(Bool)

    var queryValue: QueryValue {
        switch self {
        case .string(let text): return QueryValue(text)
        case .number(let number): return QueryValue(number)
        case .bool(let flag): return QueryValue(flag)
        }
    }

    var holdsNul: Bool {
        if case .string(let text) = self { return text.unicodeScalars.contains("\u{0}") }
        return false
    }

    var description: String {
        switch self {
        case .string(let text): return text.debugDescription
        case .number(let number): return "\(number)"
        case .bool(let flag): return "\(flag)"
        }
    }
}

/// A field of `FuzzQueryNote` and what it holds.
struct FuzzField {
    enum Kind { case string, number, bool, array, any }
    var field: Field
    var kind: Kind

    var holdsNul: Bool { field.path.contains { $0.unicodeScalars.contains("\u{0}") } }

    func value(_ note: FuzzQueryNote) -> FuzzValue {
        let path = field.path
        switch path[0] {
        case "title" where path.count == 1: return note.title.map(FuzzValue.string) ?? .missing
        case "rank" where path.count == 1: return note.rank.map(FuzzValue.number) ?? .missing
        case "flag" where path.count == 1: return note.flag.map(FuzzValue.bool) ?? .missing
        case "tags" where path.count == 1: return .array(note.tags.map(FuzzValue.string))
        case "attrs" where path.count == 2:
            return note.attrs.first { $0.key.utf8.elementsEqual(path[1].utf8) }.map { .string($0.value) } ?? .missing
        case "tree":
            guard var tree = note.tree else { return .missing }
            for key in path.dropFirst() {
                guard case .object(let members) = tree, let member = members.first(where: { $0.key.utf8.elementsEqual(key.utf8) }) else {
                    return .missing
                }
                tree = member.value
            }
            return FuzzValue(tree)
        default: return .missing
        }
    }

    static func read(_ input: inout FuzzBytes) -> FuzzField {
        switch input.byte() % 8 {
        case 0: return FuzzField(field: Field("title"), kind: .string)
        case 1: return FuzzField(field: Field("rank"), kind: .number)
        case 2: return FuzzField(field: Field("flag"), kind: .bool)
        case 3: return FuzzField(field: Field("tags"), kind: .array)
        case 4, 5: return FuzzField(field: Field("attrs", input.key()), kind: .string)
        default: return FuzzField(field: Field(path: ["tree"] + (0..<input.int(0...5)).map { _ in input.key() }), kind: .any)
        }
    }
}

/// A predicate, as the target builds it and as its judge reads it.
indirect enum FuzzPredicate {
    enum Comparison: CaseIterable { case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual }

    case compare(FuzzField, Comparison, FuzzOperand)
    case isIn(FuzzField, [FuzzOperand])
    case isNull(FuzzField)
    case hasPrefix(FuzzField, String)
    case containsText(FuzzField, String)
    case contains(FuzzField, FuzzOperand)
    case and(FuzzPredicate, FuzzPredicate), or(FuzzPredicate, FuzzPredicate), not(FuzzPredicate)
    case all([FuzzPredicate]), any([FuzzPredicate])

    static func read(_ input: inout FuzzBytes, depth: Int = 0) -> FuzzPredicate {
        let choice = input.byte()
        if depth < 5, choice >= 200 {
            switch choice % 5 {
            case 0: return .and(read(&input, depth: depth + 1), read(&input, depth: depth + 1))
            case 1: return .or(read(&input, depth: depth + 1), read(&input, depth: depth + 1))
            case 2: return .not(read(&input, depth: depth + 1))
            case 3: return .all((0..<input.int(0...4)).map { _ in read(&input, depth: depth + 1) })
            default: return .any((0..<input.int(0...4)).map { _ in read(&input, depth: depth + 1) })
            }
        }
        let field = FuzzField.read(&input)
        func operand() -> FuzzOperand {
            // Mostly of the field's kind; now and then of another, which the store may refuse.
            let kind: FuzzField.Kind = field.kind == .any || input.byte() < 16 ? [.string, .number, .bool][input.int(0...2)] : field.kind
            switch kind {
            case .number: return .number(input.number())
            case .bool: return .bool(input.bool())
            default: return .string(input.string())
            }
        }
        switch choice % 8 {
        case 0: return .isNull(field)
        case 1: return .hasPrefix(field, input.string())
        case 2: return .containsText(field, input.string())
        case 3: return .contains(field, operand())
        case 4:
            let count = input.byte()
            // Sometimes a list of 1,000 values the objects don't hold, then the drawn ones.
            let many: [FuzzOperand] = count == 255 ? (0..<1_000).map { index -> FuzzOperand in
                switch field.kind {
                case .number: return .number(Double(index) + 0.25)
                case .bool: return .bool(index % 2 == 0)
                default: return .string("v\(index)")
                }
            } : []
            return .isIn(field, many + (0..<Int(count % 12)).map { _ in operand() })
        default:
            return .compare(field, Comparison.allCases[input.int(0...5)], operand())
        }
    }

    /// Whether the store may refuse it (a kind its field doesn't hold): a query without such a
    /// predicate, nor U+0000, must be answered.
    var mayBeRefused: Bool {
        func fits(_ field: FuzzField, _ operand: FuzzOperand) -> Bool {
            switch (field.kind, operand) {
            case (.any, _), (.string, .string), (.number, .number), (.bool, .bool), (.array, .string): return true
            default: return false
            }
        }
        switch self {
        case .compare(let field, _, let operand): return field.kind == .array || !fits(field, operand)
        case .isIn(let field, let operands): return field.kind == .array || !operands.allSatisfy { fits(field, $0) }
        case .isNull: return false
        case .hasPrefix(let field, _), .containsText(let field, _): return field.kind != .string && field.kind != .any
        case .contains(let field, let operand): return !(field.kind == .array || field.kind == .any) || !fits(field, operand)
        case .and(let left, let right), .or(let left, let right): return left.mayBeRefused || right.mayBeRefused
        case .not(let inner): return inner.mayBeRefused
        case .all(let list), .any(let list): return list.contains(where: \.mayBeRefused)
        }
    }

    /// Whether a key or an operand holds U+0000: the store must refuse it.
    var holdsNul: Bool {
        func nul(_ text: String) -> Bool { text.unicodeScalars.contains("\u{0}") }
        switch self {
        case .compare(let field, _, let operand), .contains(let field, let operand): return field.holdsNul || operand.holdsNul
        // An `isIn` of no values is `.any([])`, which names no field.
        case .isIn(let field, let operands): return (field.holdsNul && !operands.isEmpty) || operands.contains(where: \.holdsNul)
        case .isNull(let field): return field.holdsNul
        case .hasPrefix(let field, let text), .containsText(let field, let text): return field.holdsNul || nul(text)
        case .and(let left, let right), .or(let left, let right): return left.holdsNul || right.holdsNul
        case .not(let inner): return inner.holdsNul
        case .all(let list), .any(let list): return list.contains(where: \.holdsNul)
        }
    }

    var predicate: QueryPredicate {
        switch self {
        case .compare(let field, let comparison, let operand):
            let value = operand.queryValue
            switch comparison {
            case .equal: return field.field == value
            case .notEqual: return field.field != value
            case .less: return field.field < value
            case .lessOrEqual: return field.field <= value
            case .greater: return field.field > value
            case .greaterOrEqual: return field.field >= value
            }
        case .isIn(let field, let operands): return field.field.isIn(operands.map(\.queryValue))
        case .isNull(let field): return field.field.isNull
        case .hasPrefix(let field, let prefix): return field.field.hasPrefix(prefix)
        case .containsText(let field, let text): return field.field.containsText(text)
        case .contains(let field, let operand): return field.field.contains(operand.queryValue)
        case .and(let left, let right): return left.predicate && right.predicate
        case .or(let left, let right): return left.predicate || right.predicate
        case .not(let inner): return !inner.predicate
        case .all(let list): return .all(list.map(\.predicate))
        case .any(let list): return .any(list.map(\.predicate))
        }
    }

    func matches(_ note: FuzzQueryNote) -> Bool {
        func folded(_ text: String) -> [UInt8] { text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 } }
        switch self {
        case .compare(let field, let comparison, let operand):
            let order = field.value(note).compare(operand)
            switch comparison {
            case .equal: return order == .orderedSame
            case .notEqual: return order != .orderedSame
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order == .orderedAscending || order == .orderedSame
            case .greater: return order == .orderedDescending
            case .greaterOrEqual: return order == .orderedDescending || order == .orderedSame
            }
        case .isIn(let field, let operands):
            let value = field.value(note)
            return operands.contains { value.compare($0) == .orderedSame }
        case .isNull(let field):
            switch field.value(note) {
            case .missing, .null: return true
            default: return false
            }
        case .hasPrefix(let field, let prefix):
            guard case .string(let text) = field.value(note) else { return false }
            return text.utf8.starts(with: prefix.utf8)
        case .containsText(let field, let needle):
            guard case .string(let text) = field.value(note) else { return false }
            let haystack = folded(text), wanted = folded(needle)
            if wanted.isEmpty { return true }
            guard wanted.count <= haystack.count else { return false }
            return (0...(haystack.count - wanted.count)).contains { haystack[$0..<($0 + wanted.count)].elementsEqual(wanted) }
        case .contains(let field, let operand):
            guard case .array(let elements) = field.value(note) else { return false }
            return elements.contains { $0.compare(operand) == .orderedSame }
        case .and(let left, let right): return left.matches(note) && right.matches(note)
        case .or(let left, let right): return left.matches(note) || right.matches(note)
        case .not(let inner): return !inner.matches(note)
        case .all(let list): return list.allSatisfy { $0.matches(note) }
        case .any(let list): return list.contains { $0.matches(note) }
        }
    }
}

/// One input: the objects, how they are parked, and the query.
struct FuzzQueryCase {
    enum SortKey { case field(FuzzField), modificationDate }

    var batches: [(notes: [FuzzQueryNote], oneCall: Bool)] = []
    var predicate: FuzzPredicate
    var sorts: [(key: SortKey, ascending: Bool)] = []
    var limit: Int?
    var pageSize: Int

    init(_ bytes: [UInt8]) {
        var input = FuzzBytes(bytes: bytes)
        var index = 0
        for _ in 0..<input.int(1...3) {
            var notes: [FuzzQueryNote] = []
            for _ in 0..<input.int(0...4) {
                var note = FuzzQueryNote(id: "o\(index)")
                index += 1
                let present = input.byte()
                if present & 1 != 0 { note.title = input.string() }
                if present & 2 != 0 { note.rank = input.number() }
                if present & 4 != 0 { note.flag = input.bool() }
                if present & 8 != 0 { note.tags = (0..<input.int(0...3)).map { _ in input.string() } }
                if present & 16 != 0 { for _ in 0..<input.int(1...4) { note.attrs[input.key()] = input.string() } }
                if present & 32 != 0 { note.tree = input.tree() }
                notes.append(note)
            }
            batches.append((notes, input.bool()))
        }
        predicate = FuzzPredicate.read(&input)
        for _ in 0..<input.int(0...3) {
            let byte = input.byte()
            let key: SortKey = byte % 4 == 0 ? .modificationDate : .field(FuzzField.read(&input))
            sorts.append((key, byte & 0x80 == 0))
        }
        let limitByte = input.byte()
        limit = limitByte >= 128 ? Int(limitByte % 12) : nil
        pageSize = input.int(1...6)
    }

    var notes: [FuzzQueryNote] { batches.flatMap(\.notes) }

    static func holdsNul(_ note: FuzzQueryNote) -> Bool {
        func nul(_ text: String) -> Bool { text.unicodeScalars.contains("\u{0}") }
        return note.title.map(nul) == true || note.tags.contains(where: nul)
            || note.attrs.contains { nul($0.key) || nul($0.value) } || note.tree?.holdsNul == true
    }

    var query: Query<FuzzQueryNote> {
        var query = Query(FuzzQueryNote.self).filter(predicate.predicate)
        for (key, ascending) in sorts {
            switch key {
            case .field(let field): query = query.sorted(by: field.field, ascending ? .ascending : .descending)
            case .modificationDate: query = query.sortedByModificationDate(ascending ? .ascending : .descending)
            }
        }
        if let limit { query = query.limit(limit) }
        return query
    }

    var mayBeRefused: Bool {
        predicate.mayBeRefused || sorts.contains {
            if case .field(let field) = $0.key { return field.kind == .array }
            return false
        }
    }

    var mustBeRefused: Bool {
        predicate.holdsNul || sorts.contains {
            if case .field(let field) = $0.key { return field.holdsNul }
            return false
        }
    }

    /// The identifiers the query answers with among `notes`, dated `dates` (the store's
    /// modification dates), with `limit` or without.
    func expected(_ notes: [FuzzQueryNote], dates: [String: Double], limited: Bool = true) -> [String] {
        func value(_ note: FuzzQueryNote, _ key: SortKey) -> FuzzValue {
            switch key {
            case .field(let field): return field.value(note)
            case .modificationDate: return .number(dates[note.id] ?? 0)
            }
        }
        let sorted = notes.filter(predicate.matches).sorted { left, right in
            for (key, ascending) in sorts {
                let order = value(left, key).sortCompare(value(right, key))
                if order != .orderedSame { return (order == .orderedAscending) == ascending }
            }
            return FuzzValue.bytes(left.id, right.id) == .orderedAscending
        }.map(\.id)
        guard limited, let limit else { return sorted }
        return Array(sorted.prefix(limit))
    }
}

extension FuzzTarget {
    static let query = FuzzTarget(
        name: "query",
        summary: "objects and a query built from random expressions, answered by SQL and by rule, held to a judge"
    ) { bytes in
        let input = FuzzQueryCase(bytes)
        QueryStore.shared.run(input)
    }
}

/// Runs a query case on a garage in a temporary directory and on one that holds the objects
/// unsaved; the directory is reused from input to input, its files removed each time.
final class QueryStore: Sendable {
    static let shared = QueryStore()

    /// In memory's file system where there is one (/dev/shm: a commit's sync costs nothing,
    /// which makes the target several times faster), else in the temporary directory; removed
    /// when the process exits.
    private static let path: String = {
        let base = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : FileManager.default.temporaryDirectory.path
        return base + "/garage-fuzz-query-\(ProcessInfo.processInfo.processIdentifier)"
    }()

    private static let cleanup: Void = {
        atexit { try? FileManager.default.removeItem(atPath: QueryStore.path) }
    }()

    let directory: URL

    init() {
        _ = Self.cleanup
        directory = URL(fileURLWithPath: Self.path, isDirectory: true)
    }

    private func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    func run(_ input: FuzzQueryCase) {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("store.garage").path
        removeStore(path)
        // GARAGE_FUZZ_QUERY_TRACE=1: the case on standard error, and the store kept (to read a finding).
        let trace = ProcessInfo.processInfo.environment["GARAGE_FUZZ_QUERY_TRACE"] == "1"
        defer { if !trace { removeStore(path) } }
        if trace {
            let notes = input.batches.map { batch in batch.notes.map { "\($0)" } }
            let sorts = input.sorts.map { "\($0.key) \($0.ascending)" }
            let text = "query case: \(notes) \(input.query.predicate) sorts \(sorts) store \(path)\n"
            FileHandle.standardError.write(Data(text.utf8))
        }
        do {
            let saved = try Garage(path: path)
            let unsaved = try Garage.inMemory()
            unsaved.isAutosaveEnabled = false
            var parked: [FuzzQueryNote] = []
            for (notes, oneCall) in input.batches {
                let clean = notes.filter { !FuzzQueryCase.holdsNul($0) }
                for garage in [saved, unsaved] {
                    if oneCall {
                        park(clean.count == notes.count, notes, "parkAll") { try garage.parkAll(notes) }
                        if clean.count != notes.count { park(true, clean, "parkAll") { try garage.parkAll(clean) } }
                    } else {
                        for note in notes { park(clean.contains { $0.id == note.id }, [note], "park") { try garage.park(note) } }
                    }
                }
                parked += clean
            }
            // The dates each store recorded (an unsaved change: when it was parked).
            func dates(_ garage: Garage) throws -> [String: Double] {
                var dates: [String: Double] = [:]
                for note in parked {
                    guard let metadata = try garage.metadata(FuzzQueryNote.self, identifier: note.id) else {
                        fatalError("query: \(note.id) was parked, and the store has no row of it")
                    }
                    dates[note.id] = metadata.modificationDate.timeIntervalSince1970
                }
                return dates
            }
            check(input, saved, parked, try dates(saved), engine: "SQLite", pages: true)
            check(input, unsaved, parked, try dates(unsaved), engine: "unsaved (rule)", pages: true)
        } catch {
            fatalError("query: \(error) before the query")
        }
    }

    /// Parks, which must throw `EncodingError` exactly when an object holds U+0000.
    private func park(_ clean: Bool, _ notes: [FuzzQueryNote], _ call: String, _ body: () throws -> Void) {
        do {
            try body()
            if !clean { fatalError("query: \(call) of objects holding U+0000 was not refused") }
        } catch is EncodingError where !clean {
        } catch {
            fatalError("query: \(call) of \(notes.map(\.id)) threw \(error)")
        }
    }

    private func check(_ input: FuzzQueryCase, _ garage: Garage, _ notes: [FuzzQueryNote], _ dates: [String: Double],
                       engine: String, pages: Bool) {
        let query = input.query
        let described = "\(engine): \(query.predicate), \(input.sorts.count) orders, limit \(input.limit.map(String.init) ?? "none")"
        do {
            let identifiers = try garage.identifiers(query)
            let count = try garage.count(query)
            if input.mustBeRefused { fatalError("query: not refused (U+0000): \(described)") }
            let expected = input.expected(notes, dates: dates)
            guard identifiers == expected else { fatalError("query: \(identifiers) where \(expected) was expected: \(described)") }
            let all = input.expected(notes, dates: dates, limited: false)
            guard count == all.count else { fatalError("query: counted \(count) where \(all.count) was expected: \(described)") }
            guard pages else { return }
            let paged = query.limit(input.pageSize)
            var page = try garage.retrievePage(paged)
            var seen = page.objects.map(\.id)
            while let next = page.next, seen.count <= notes.count {
                page = try garage.retrievePage(paged, after: next)
                seen += page.objects.map(\.id)
            }
            guard seen == all else { fatalError("query: pages of \(input.pageSize) gave \(seen) where \(all) was expected: \(described)") }
        } catch GarageError.invalidQuery(_, _, let reason) {
            if !input.mustBeRefused && !input.mayBeRefused { fatalError("query: refused (\(reason)): \(described)") }
            if input.mustBeRefused && !input.mayBeRefused && !reason.contains("U+0000") {
                fatalError("query: refused for another reason than U+0000 (\(reason)): \(described)")
            }
        } catch {
            fatalError("query: \(error): \(described)")
        }
    }
}
