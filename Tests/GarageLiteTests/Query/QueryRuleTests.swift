import Foundation
import GarageLite
import Testing

/// Issue 28: a query returns exactly the objects a filter of `retrieveAll` in memory keeps, in
/// the order a sort in memory gives. Random notes and random queries, on the engine the suite
/// runs on (SQLite's or PostgreSQL's SQL), then again with the notes unsaved (the store's rule
/// over the merged rows). The expected answer is computed here from the Swift values, by the
/// README's semantics, independently of the library's JSON.
///
/// Issue 42 grew it: orders by modification date (notes parked in batches, so that some dates
/// are level), `isIn` lists of up to 10,000 values, dictionary keys and strings from the whole
/// of Unicode (controls, escapes, combining marks, astral characters; U+0000 refused at park and
/// in queries), and paths up to six levels deep into a value of any shape (`Tree`).
///
/// Issue 45: each runs on the test engine, and on the reference engine (the boundary's
/// primitives only: its queries are the rule's default, every row read and matched in Swift).
///
/// `GARAGE_QUERY_SEEDS=200 swift test --filter QueryRuleTests` runs more stores (default 4).
@Suite("Queries equal a filter in memory")
struct QueryRuleTests {
    static let seeds = ProcessInfo.processInfo.environment["GARAGE_QUERY_SEEDS"].flatMap { Int($0) } ?? 4

    /// A value of several kinds, or null: what a property of uneven data holds.
    enum Mixed: Codable, Sendable, Hashable {
        case text(String), number(Double), flag(Bool), none

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .none }
            else if let flag = try? container.decode(Bool.self) { self = .flag(flag) }
            else if let number = try? container.decode(Double.self) { self = .number(number) }
            else { self = .text(try container.decode(String.self)) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .number(let number): try container.encode(number)
            case .flag(let flag): try container.encode(flag)
            case .none: try container.encodeNil()
            }
        }
    }

    struct Place: Codable, Sendable, Hashable {
        var city: String?
    }

    struct QueryNote: Codable, Identifiable, Sendable, Hashable {
        var id: String
        var title: String?
        var rank: Double?
        var count: Int?
        var done: Bool?
        var mixed: Mixed?
        var tags: [String] = []
        var place: Place?
        /// Keys from ``awkwardKeys``, values from the whole of Unicode.
        var attrs: [String: String] = [:]
        /// Objects nested up to six levels, of any shape.
        var tree: Tree?
    }

    static let words = ["milk", "Milk", "MILK", "bread", "é", "É", "a", "B", "z", "mi", "", "Zoo", "été", "10", "9"]

    static func randomNote(_ index: Int, _ random: inout SplitMix64) -> QueryNote {
        func maybe<T>(_ make: () -> T) -> T? { Int.random(in: 0..<4, using: &random) == 0 ? nil : make() }
        func word() -> String {
            Int.random(in: 0..<5, using: &random) == 0 ? randomString(&random) : words.randomElement(using: &random)!
        }
        var note = QueryNote(id: "n\(index)")
        note.title = maybe { word() + (Bool.random(using: &random) ? " " + word() : "") }
        note.rank = maybe { Int.random(in: 0..<8, using: &random) == 0 ? randomNumber(&random) : Double(Int.random(in: -3...3, using: &random)) / 2 }
        note.count = maybe { Int.random(in: -2...2, using: &random) }
        note.done = maybe { Bool.random(using: &random) }
        note.mixed = maybe {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return .text(word())
            case 1: return .number(Double(Int.random(in: -2...2, using: &random)))
            case 2: return .flag(Bool.random(using: &random))
            default: return Mixed.none
            }
        }
        note.tags = (0..<Int.random(in: 0...3, using: &random)).map { _ in word() }
        note.place = maybe { Place(city: maybe { word() }) }
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            note.attrs[key(awkwardKeys.randomElement(using: &random)!)] = randomString(&random)
        }
        note.tree = maybe { randomTree(&random) }
        return note
    }

    /// What a field holds, as the README's semantics see it.
    enum Value {
        case missing, null, bool(Bool), number(Double), string(String), array([Value]), object

        var isNullOrMissing: Bool {
            switch self {
            case .missing, .null: return true
            default: return false
            }
        }

        /// What an `isIn` list holds it as: strings by their bytes.
        var key: Operand.Key? {
            switch self {
            case .string(let text): return .string(Array(text.utf8))
            case .number(let number): return .number(number)
            case .bool(let flag): return .bool(flag)
            default: return nil
            }
        }
    }

    /// A comparison's operand, of one kind.
    enum Operand: CustomStringConvertible {
        case string(String), number(Double), bool(Bool)

        enum Key: Hashable {
            case string([UInt8]), number(Double), bool(Bool)
        }

        var queryValue: QueryValue {
            switch self {
            case .string(let text): return QueryValue(text)
            case .number(let number): return QueryValue(number)
            case .bool(let flag): return QueryValue(flag)
            }
        }

        var key: Key {
            switch self {
            case .string(let text): return .string(Array(text.utf8))
            case .number(let number): return .number(number)
            case .bool(let flag): return .bool(flag)
            }
        }

        var description: String {
            switch self {
            case .string(let text): return text.debugDescription
            case .number(let number): return "\(number)"
            case .bool(let flag): return "\(flag)"
            }
        }
    }

    /// What a field holds: the store refuses a comparison with a value of another kind than a
    /// field's, but `mixed` and the paths into `tree` hold any kind (their shape is unknown).
    enum Kind { case string, number, bool, any, array }

    static let fields: [(field: Field, kind: Kind)] = [
        (Field("title"), .string), (Field("rank"), .number), (Field("count"), .number), (Field("done"), .bool),
        (Field("mixed"), .any), (Field("tags"), .array), (Field("place", "city"), .string),
    ]

    static func value(_ note: QueryNote, _ field: Field) -> Value {
        switch field.path.first {
        case "attrs":
            guard field.path.count == 2 else { return field.path.count == 1 ? .object : .missing }
            // Keys by their bytes: Swift's `Dictionary` finds `"é"` under `"e\u{301}"`, the store doesn't.
            return note.attrs.first { $0.key.utf8.elementsEqual(field.path[1].utf8) }.map { .string($0.value) } ?? .missing
        case "tree":
            return note.tree?.walk(field.path.dropFirst()) ?? .missing
        default:
            break
        }
        switch field.path {
        case ["title"]: return note.title.map(Value.string) ?? .missing
        case ["rank"]: return note.rank.map(Value.number) ?? .missing
        case ["count"]: return note.count.map { .number(Double($0)) } ?? .missing
        case ["done"]: return note.done.map(Value.bool) ?? .missing
        case ["mixed"]:
            switch note.mixed {
            case nil: return .missing
            case .text(let text)?: return .string(text)
            case .number(let number)?: return .number(number)
            case .flag(let flag)?: return .bool(flag)
            case .none?: return .null
            }
        case ["tags"]: return .array(note.tags.map(Value.string))
        case ["place", "city"]: return note.place?.city.map(Value.string) ?? .missing
        default: return .missing
        }
    }

    /// A field to query: one of ``fields``, a key of `attrs`, or a path into `tree` (1 to 6
    /// keys), mostly one that some note holds.
    static func randomField(_ random: inout SplitMix64, _ notes: [QueryNote]) -> (field: Field, kind: Kind) {
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5:
            return fields.randomElement(using: &random)!
        case 5, 6:
            let held = notes.randomElement(using: &random)!.attrs.keys
            let key = Int.random(in: 0..<10, using: &random) == 0 ? randomText(&random)
                : Bool.random(using: &random) && !held.isEmpty ? held.randomElement(using: &random)! : awkwardKeys.randomElement(using: &random)!
            return (Field("attrs", Self.key(key)), .string)
        default:
            var path = ["tree"]
            var tree = notes.randomElement(using: &random)!.tree
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                if case .object(let members)? = tree, !members.isEmpty, Int.random(in: 0..<4, using: &random) != 0 {
                    let member = members.randomElement(using: &random)!
                    path.append(member.key)
                    tree = member.value
                } else {
                    path.append(key(Bool.random(using: &random) ? treeKeys.randomElement(using: &random)! : awkwardKeys.randomElement(using: &random)!))
                    tree = nil
                }
            }
            return (Field(path: path), .any)
        }
    }

    /// An operand of `kind` for `field`: often one that a note holds there.
    static func randomOperand(_ kind: Kind, _ field: Field, _ random: inout SplitMix64, _ notes: [QueryNote]) -> Operand {
        let wanted: Kind = kind == .any ? [Kind.string, .number, .bool].randomElement(using: &random)! : kind
        if Bool.random(using: &random) {
            switch (value(notes.randomElement(using: &random)!, field), wanted) {
            case (.string(let text), .string), (.string(let text), .array): return .string(text)
            case (.number(let number), .number): return .number(number)
            case (.bool(let flag), .bool): return .bool(flag)
            case (.array(let elements), _):
                if let element = elements.randomElement(using: &random) {
                    switch element {
                    case .string(let text): return .string(text)
                    case .number(let number): return .number(number)
                    case .bool(let flag): return .bool(flag)
                    default: break
                    }
                }
            default: break
            }
        }
        switch wanted {
        case .string, .array:
            return .string(Bool.random(using: &random) ? words.randomElement(using: &random)! : randomString(&random))
        case .number: return .number(randomNumber(&random))
        default: return .bool(Bool.random(using: &random))
        }
    }

    /// A text a note holds at `field`, or any.
    static func heldText(_ field: Field, _ random: inout SplitMix64, _ notes: [QueryNote]) -> String {
        if case .string(let text) = value(notes.randomElement(using: &random)!, field) { return text }
        return Bool.random(using: &random) ? words.randomElement(using: &random)! : randomString(&random)
    }

    /// A random predicate, how it judges a note, and whether the store must refuse it (it holds
    /// U+0000, which no store holds).
    struct Drawn {
        var predicate: QueryPredicate
        var judge: (QueryNote) -> Bool
        var refused = false
    }

    /// How many values an `isIn` lists: mostly few, sometimes 1,000 or 10,000.
    static func randomListSize(_ random: inout SplitMix64) -> Int {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<10: return 0
        case 10..<65: return Int.random(in: 1...5, using: &random)
        case 65..<90: return Int.random(in: 6...60, using: &random)
        case 90..<96: return 1_000
        default: return 10_000
        }
    }

    static func randomPredicate(_ random: inout SplitMix64, _ notes: [QueryNote], depth: Int = 0, poison: Bool = false) -> Drawn {
        if depth < 3, Int.random(in: 0..<3, using: &random) == 0 {
            let choice = Int.random(in: 0..<5, using: &random)
            if choice >= 3 {
                // A list of any length, `.all` or `.any` (none: every object, or none).
                let parts = (0..<Int.random(in: 0...4, using: &random)).map { _ in
                    randomPredicate(&random, notes, depth: depth + 1, poison: poison)
                }
                let judges = parts.map(\.judge), refused = parts.contains(where: \.refused)
                return choice == 3
                    ? Drawn(predicate: .all(parts.map(\.predicate)), judge: { note in judges.allSatisfy { $0(note) } }, refused: refused)
                    : Drawn(predicate: .any(parts.map(\.predicate)), judge: { note in judges.contains { $0(note) } }, refused: refused)
            }
            let left = randomPredicate(&random, notes, depth: depth + 1, poison: poison)
            let right = randomPredicate(&random, notes, depth: depth + 1, poison: poison)
            let refused = left.refused || right.refused
            switch choice {
            case 0: return Drawn(predicate: left.predicate && right.predicate, judge: { left.judge($0) && right.judge($0) }, refused: refused)
            case 1: return Drawn(predicate: left.predicate || right.predicate, judge: { left.judge($0) || right.judge($0) }, refused: refused)
            default: return Drawn(predicate: !left.predicate, judge: { !left.judge($0) }, refused: left.refused)
            }
        }
        let drawnField = randomField(&random, notes)
        var field = drawnField.field
        let kind = drawnField.kind
        // Sometimes U+0000: in a key of the path, or in a string operand below.
        var refused = false
        let nul = poison && Int.random(in: 0..<40, using: &random) == 0
        if nul, field.path.count > 1, field.path[0] != "place", Bool.random(using: &random) {
            var path = field.path
            let index = Int.random(in: 1..<path.count, using: &random)
            path[index] = withNul(path[index], &random)
            field = Field(path: path)
            refused = true
        }
        func poisoned(_ operand: Operand) -> Operand {
            guard nul, !refused, case .string(let text) = operand else { return operand }
            refused = true
            return .string(withNul(text, &random))
        }
        func drawn(_ predicate: QueryPredicate, _ judge: @escaping (QueryNote) -> Bool) -> Drawn {
            Drawn(predicate: predicate, judge: judge, refused: refused)
        }

        let choice = Int.random(in: 0..<12, using: &random)
        if choice == 0 {
            return drawn(field.isNull, { value($0, field).isNullOrMissing })
        }
        if kind == .array || (kind == .any && choice == 3) {
            let wanted = poisoned(randomOperand(kind, field, &random, notes))
            return drawn(field.contains(wanted.queryValue), {
                guard case .array(let elements) = value($0, field) else { return false }
                return elements.contains { compare($0, wanted) == .orderedSame }
            })
        }
        if (kind == .string || kind == .any) && choice == 1 {
            var prefix = heldText(field, &random, notes)
            prefix = scalarPrefix(prefix, Int.random(in: 0...prefix.unicodeScalars.count + 1, using: &random))
            if case .string(let text) = poisoned(.string(prefix)) { prefix = text }
            return drawn(field.hasPrefix(prefix), { [prefix] in
                guard case .string(let text) = value($0, field) else { return false }
                return text.utf8.starts(with: prefix.utf8)
            })
        }
        if (kind == .string || kind == .any) && choice == 2 {
            var needle = Int.random(in: 0..<4, using: &random) == 0 ? words.randomElement(using: &random)!
                : scalarSlice(heldText(field, &random, notes), &random)
            if case .string(let text) = poisoned(.string(needle)) { needle = text }
            return drawn(field.containsText(needle), { [needle] in
                guard case .string(let text) = value($0, field) else { return false }
                return contains(folded(text), folded(needle))
            })
        }
        if choice == 4 || choice == 5 {
            let size = randomListSize(&random)
            var operands = (0..<size).map { index -> Operand in
                // Values the notes hold, among many they don't.
                if size > 60, index % 50 != 0 {
                    switch kind == .any ? [Kind.string, .number, .bool][index % 3] : kind {
                    case .string: return .string("v\(index)\(strings[index % strings.count])")
                    case .number: return .number(Double(index) + 0.25)
                    default: return .bool(index % 2 == 0)
                    }
                }
                return randomOperand(kind, field, &random, notes)
            }
            if nul, !refused, let index = operands.indices.randomElement(using: &random) {
                if case .string(let text) = operands[index] {
                    operands[index] = .string(withNul(text, &random))
                    refused = true
                }
            }
            // An `isIn` of no values is `.any([])`, which names no field: nothing to refuse.
            if operands.isEmpty { refused = false }
            let keys = Set(operands.map(\.key))
            return drawn(field.isIn(operands.map(\.queryValue)), { value($0, field).key.map { keys.contains($0) } ?? false })
        }
        let operand = poisoned(randomOperand(kind, field, &random, notes))
        if choice == 6 {
            return drawn(field != operand.queryValue, { compare(value($0, field), operand) != .orderedSame })
        }
        let operations: [((Field, QueryValue) -> QueryPredicate, (ComparisonResult) -> Bool)] = [
            ({ $0 == $1 }, { $0 == .orderedSame }), ({ $0 < $1 }, { $0 == .orderedAscending }),
            ({ $0 <= $1 }, { $0 != .orderedDescending }), ({ $0 > $1 }, { $0 == .orderedDescending }),
            ({ $0 >= $1 }, { $0 != .orderedAscending }),
        ]
        let (make, holds) = operations.randomElement(using: &random)!
        return drawn(make(field, operand.queryValue), { compare(value($0, field), operand).map(holds) ?? false })
    }

    /// ASCII letters lowercased, the rest as it is: UTF-8 bytes, so that `contains` is by bytes.
    static func folded(_ text: String) -> [UInt8] {
        text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
    }

    static func contains(_ text: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= text.count else { return false }
        return (0...(text.count - needle.count)).contains { text[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    static func compareBytes(_ left: String, _ right: String) -> ComparisonResult {
        left.utf8.lexicographicallyPrecedes(right.utf8) ? .orderedAscending
            : right.utf8.lexicographicallyPrecedes(left.utf8) ? .orderedDescending : .orderedSame
    }

    /// How a stored value compares with an operand of one kind; `nil` for another kind.
    static func compare(_ stored: Value, _ operand: Operand) -> ComparisonResult? {
        switch (stored, operand) {
        case (.string(let text), .string(let right)): return compareBytes(text, right)
        case (.number(let number), .number(let right)):
            return number < right ? .orderedAscending : number > right ? .orderedDescending : .orderedSame
        case (.bool(let flag), .bool(let right)):
            return flag == right ? .orderedSame : flag ? .orderedDescending : .orderedAscending
        default: return nil
        }
    }

    /// The sort rank and value of a stored value: missing or null, booleans, numbers, strings, the rest.
    static func sortCompare(_ left: Value, _ right: Value) -> ComparisonResult {
        func rank(_ value: Value) -> Int {
            switch value {
            case .missing, .null: return 0
            case .bool: return 1
            case .number: return 2
            case .string: return 3
            case .array, .object: return 4
            }
        }
        if rank(left) != rank(right) { return rank(left) < rank(right) ? .orderedAscending : .orderedDescending }
        switch (left, right) {
        case (.bool(let l), .bool(let r)): return l == r ? .orderedSame : l ? .orderedDescending : .orderedAscending
        case (.number(let l), .number(let r)): return l < r ? .orderedAscending : l > r ? .orderedDescending : .orderedSame
        case (.string(let l), .string(let r)): return compareBytes(l, r)
        default: return .orderedSame
        }
    }

    /// What a query sorts by: a field, or the date the store recorded the note's last change.
    enum SortKey: CustomStringConvertible {
        case field(Field), modificationDate

        var description: String {
            switch self {
            case .field(let field): return field.path.map(\.debugDescription).joined(separator: ".")
            case .modificationDate: return "modificationDate"
            }
        }
    }

    typealias Sorts = [(key: SortKey, order: QuerySort.Order)]

    /// The modification date of each note, as the store recorded it (a note parked but not
    /// saved: when it was parked).
    typealias Dates = [String: Double]

    static func expected(_ notes: [QueryNote], _ judge: (QueryNote) -> Bool, sorts: Sorts, limit: Int?, dates: Dates) -> [String] {
        func sortValue(_ note: QueryNote, _ key: SortKey) -> Value {
            switch key {
            case .field(let field): return value(note, field)
            case .modificationDate: return .number(dates[note.id]!)
            }
        }
        var kept = notes.filter(judge)
        kept.sort { left, right in
            for (key, order) in sorts {
                let result = sortCompare(sortValue(left, key), sortValue(right, key))
                if result != .orderedSame { return (result == .orderedAscending) == (order == .ascending) }
            }
            return compareBytes(left.id, right.id) == .orderedAscending
        }
        return Array(kept.map(\.id).prefix(limit ?? .max))
    }

    /// The expected answer of a query ordered by fields only (the plan tests' form).
    static func expected(_ notes: [QueryNote], _ judge: (QueryNote) -> Bool, sorts: [(Field, QuerySort.Order)], limit: Int?) -> [String] {
        expected(notes, judge, sorts: sorts.map { (key: SortKey.field($0.0), order: $0.1) }, limit: limit, dates: [:])
    }

    struct DrawnQuery {
        var query: Query<QueryNote>
        var judge: (QueryNote) -> Bool
        var sorts: Sorts
        var limit: Int?
        var refused: Bool

        var description: String {
            "\(query.predicate), sorted by \(sorts.map { "\($0.key) \($0.order)" }), limit \(limit.map(String.init) ?? "none")"
        }
    }

    /// A random query: a predicate, up to two orders by fields (any but `tags`), the
    /// modification date alone, before or after them, and a limit. With `poison`, sometimes a
    /// key or operand holding U+0000 (`refused`).
    static func randomQuery(_ random: inout SplitMix64, _ notes: [QueryNote], poison: Bool = false,
                            modificationDate: Bool = true) -> DrawnQuery {
        let drawn = randomPredicate(&random, notes, poison: poison)
        var refused = drawn.refused
        var sorts: Sorts = []
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            var field = randomField(&random, notes)
            while field.kind == .array { field = randomField(&random, notes) }
            if poison, field.field.path.count > 1, field.field.path[0] != "place", Int.random(in: 0..<40, using: &random) == 0 {
                var path = field.field.path
                path[path.count - 1] = withNul(path[path.count - 1], &random)
                field.field = Field(path: path)
                refused = true
            }
            sorts.append((.field(field.field), Bool.random(using: &random) ? .ascending : .descending))
        }
        if modificationDate, Int.random(in: 0..<3, using: &random) == 0 {
            let order: QuerySort.Order = Bool.random(using: &random) ? .ascending : .descending
            sorts.insert((.modificationDate, order), at: Int.random(in: 0..<3, using: &random) == 0 ? 0 : sorts.count)
        }
        var query = Query(QueryNote.self).filter(drawn.predicate)
        for (key, order) in sorts {
            switch key {
            case .field(let field): query = query.sorted(by: field, order)
            case .modificationDate: query = query.sortedByModificationDate(order)
            }
        }
        let limit = Int.random(in: 0..<3, using: &random) == 0 ? Int.random(in: 0...10, using: &random) : nil
        if let limit { query = query.limit(limit) }
        return DrawnQuery(query: query, judge: drawn.judge, sorts: sorts, limit: limit, refused: refused)
    }

    /// Parks `notes` in batches, some in one call (their dates are level), some one by one,
    /// then parks a few again changed; with `unsaved`, autosave goes off before some batch, so
    /// that the last notes are unsaved changes. Returns the notes as parked and the identifiers
    /// of the unsaved ones.
    static func park(_ notes: [QueryNote], in garage: Garage, unsaved: Bool,
                     _ random: inout SplitMix64) throws -> (notes: [QueryNote], unsaved: Set<String>) {
        var notes = notes
        var unsavedIdentifiers: Set<String> = []
        let unsavedFrom = unsaved ? Int.random(in: 0...(notes.count / 2), using: &random) : notes.count
        var start = 0
        while start < notes.count {
            let batch = Array(notes[start..<min(notes.count, start + Int.random(in: 1...12, using: &random))])
            if start >= unsavedFrom { garage.isAutosaveEnabled = false }
            if Bool.random(using: &random) {
                try garage.parkAll(batch)
            } else {
                for note in batch { try garage.park(note) }
            }
            if !garage.isAutosaveEnabled { unsavedIdentifiers.formUnion(batch.map(\.id)) }
            start += batch.count
        }
        if unsaved { garage.isAutosaveEnabled = false }
        for _ in 0..<Int.random(in: 0...3, using: &random) {
            let index = Int.random(in: 0..<notes.count, using: &random)
            notes[index].count = (notes[index].count ?? 0) + 10
            try garage.park(notes[index])
            if unsaved { unsavedIdentifiers.insert(notes[index].id) }
        }
        return (notes, unsavedIdentifiers)
    }

    /// The dates the store recorded (``Dates``).
    static func dates(_ garage: Garage, _ notes: [QueryNote], unsaved: Set<String>) throws -> Dates {
        var dates: Dates = [:]
        for note in notes {
            dates[note.id] = try #require(try garage.metadata(QueryNote.self, identifier: note.id)).modificationDate.timeIntervalSince1970
        }
        return dates
    }

    /// Notes holding U+0000 somewhere are refused at park, alone or with others, and leave
    /// nothing stored.
    static func expectNulRefusedAtPark(_ garage: Garage, _ notes: [QueryNote], _ random: inout SplitMix64, seed: Int) throws {
        let count = try garage.count(Query(QueryNote.self))
        for attempt in 0..<3 {
            var bad = notes.randomElement(using: &random)!
            bad.id = "nul\(attempt)"
            let place: String
            switch Int.random(in: 0..<7, using: &random) {
            case 0: bad.title = withNul(bad.title ?? "", &random); place = "title"
            case 1: bad.tags.append(withNul(randomString(&random), &random)); place = "tags"
            case 2: bad.attrs[withNul(awkwardKeys.randomElement(using: &random)!, &random)] = "v"; place = "attrs key"
            case 3: bad.attrs[awkwardKeys.randomElement(using: &random)!] = withNul(randomString(&random), &random); place = "attrs value"
            case 4: bad.mixed = .text(withNul(randomString(&random), &random)); place = "mixed"
            case 5:
                bad.tree = .object([.init(key: "a", value: .object([.init(key: withNul(randomText(&random), &random), value: .null)]))])
                place = "tree key"
            default:
                bad.tree = .array([.object([.init(key: "é", value: .array([.string(withNul(randomString(&random), &random))]))])])
                place = "tree string"
            }
            var good = notes.randomElement(using: &random)!
            good.id = "good\(attempt)"
            #expect(throws: EncodingError.self, "seed \(seed): U+0000 in \(place)") { try garage.park(bad) }
            #expect(throws: EncodingError.self, "seed \(seed): U+0000 in \(place)") { try garage.parkAll([good, bad]) }
            #expect(try garage.retrieve(QueryNote.self, identifier: bad.id) == nil, "seed \(seed): U+0000 in \(place)")
            #expect(try garage.retrieve(QueryNote.self, identifier: good.id) == nil, "seed \(seed): U+0000 in \(place)")
        }
        #expect(try garage.count(Query(QueryNote.self)) == count, "seed \(seed)")
    }

    /// `body` throws `invalidQuery`.
    static func expectRefused(_ described: String, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("not refused: \(described)")
        } catch GarageError.invalidQuery(_, _, let reason) {
            #expect(reason.contains("U+0000"), "\(reason): \(described)")
        } catch {
            Issue.record("\(error), not invalidQuery: \(described)")
        }
    }

    /// Every other seed declares indexes, which the engines' SQL reads for comparisons and
    /// orders: the answers must not change.
    static func declareIndexes(_ garage: Garage, seed: Int) throws {
        guard seed % 2 == 1 else { return }
        try garage.index(QueryNote.self, on: Field("title"))
        try garage.index(QueryNote.self, on: Field("rank"))
        try garage.index(QueryNote.self, on: Field("done"), Field("title"))
        try garage.index(QueryNote.self, on: Field("place", "city"))
    }

    @Test(arguments: [false, true], TestEngine.onReference)
    func randomQueriesEqualAFilterInMemory(unsaved: Bool, onReference: Bool) throws {
        for seed in 0..<Self.seeds {
            var random = SplitMix64(state: 0x5175_6572 &+ UInt64(seed))
            let garage = try TestEngine.garage(onReference: onReference)
            try Self.declareIndexes(garage, seed: seed)
            let (notes, unsavedIdentifiers) = try Self.park((0..<40).map { Self.randomNote($0, &random) }, in: garage,
                                                            unsaved: unsaved, &random)
            #expect(try garage.retrieveAll(QueryNote.self).count == notes.count)
            try Self.expectNulRefusedAtPark(garage, notes, &random, seed: seed)
            let dates = try Self.dates(garage, notes, unsaved: unsavedIdentifiers)
            for _ in 0..<60 {
                let drawn = Self.randomQuery(&random, notes, poison: true)
                let described = "seed \(seed): \(drawn.description)"
                if drawn.refused {
                    Self.expectRefused(described) { _ = try garage.identifiers(drawn.query) }
                    Self.expectRefused(described) { _ = try garage.count(drawn.query) }
                    Self.expectRefused(described) { _ = try garage.retrievePage(drawn.query.limit(drawn.limit ?? 5)) }
                    continue
                }
                let expected = Self.expected(notes, drawn.judge, sorts: drawn.sorts, limit: drawn.limit, dates: dates)
                #expect(try garage.identifiers(drawn.query) == expected, "\(described)")
                #expect(try garage.count(drawn.query) == Self.expected(notes, drawn.judge, sorts: [], limit: nil, dates: dates).count,
                        "\(described)")
                #expect(try garage.retrieve(drawn.query).map(\.id) == expected, "\(described)")
            }
        }
    }

    /// Pages after cursors add up to the query's objects; objects parked and deleted between
    /// pages neither repeat an object nor skip one that was there throughout.
    @Test(arguments: [false, true], TestEngine.onReference)
    func pagesAddUpAndStayStableWhileTheStoreChanges(unsaved: Bool, onReference: Bool) throws {
        for seed in 0..<Self.seeds {
            var random = SplitMix64(state: 0x5061_6765 &+ UInt64(seed))
            let garage = try TestEngine.garage(onReference: onReference)
            try Self.declareIndexes(garage, seed: seed)
            let parked = try Self.park((0..<40).map { Self.randomNote($0, &random) }, in: garage, unsaved: unsaved, &random)
            let notes = parked.notes
            var unsavedIdentifiers = parked.unsaved
            for round in 0..<12 {
                let dates = try Self.dates(garage, notes, unsaved: unsavedIdentifiers)
                let drawn = Self.randomQuery(&random, notes, modificationDate: true)
                let size = Int.random(in: 1...7, using: &random)
                let paged = drawn.query.limit(size)
                let expected = Self.expected(notes, drawn.judge, sorts: drawn.sorts, limit: nil, dates: dates)
                let described = "seed \(seed) round \(round): \(drawn.description), pages of \(size)"
                var seen: [String] = []
                var page = try garage.retrievePage(paged)
                seen += page.objects.map(\.id)
                while let next = page.next, seen.count <= notes.count {
                    page = try garage.retrievePage(paged, after: next)
                    seen += page.objects.map(\.id)
                }
                #expect(seen == expected, "\(described)")

                // The same, with objects parked and deleted after the first page.
                var first = try garage.retrievePage(paged)
                var stable = Set(expected)
                let added = (0..<3).map { Self.randomNote(1_000 + round * 10 + $0, &random) }
                try garage.parkAll(added)
                if let gone = expected.last, !first.objects.map(\.id).contains(gone) {
                    try garage.delete(QueryNote.self, identifier: gone)
                    stable.remove(gone)
                }
                var later = first.objects.map(\.id)
                while let next = first.next, later.count <= notes.count + added.count {
                    first = try garage.retrievePage(paged, after: next)
                    later += first.objects.map(\.id)
                }
                #expect(Set(later).count == later.count, "no object twice: \(described)")
                #expect(stable.isSubset(of: Set(later)), "no object skipped: \(described)")
                for note in added { try garage.delete(QueryNote.self, identifier: note.id) }
                if let gone = expected.last, !stable.contains(gone), let note = notes.first(where: { $0.id == gone }) {
                    try garage.park(note)
                    // Deleted, then parked again: a new row, dated now (or when read, unsaved).
                    if unsaved { unsavedIdentifiers.insert(note.id) }
                }
            }
        }
    }
}
