import Foundation
import GarageLite
import Testing

/// Issue 28: a query returns exactly the objects a filter of `retrieveAll` in memory keeps, in
/// the order a sort in memory gives. Random notes and random queries, on the engine the suite
/// runs on (SQLite's or PostgreSQL's SQL), then again with the notes unsaved (the store's rule
/// over the merged rows). The expected answer is computed here from the Swift values, by the
/// README's semantics, independently of the library's JSON.
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
    }

    static let words = ["milk", "Milk", "MILK", "bread", "é", "É", "a", "B", "z", "mi", "", "Zoo", "été", "10", "9"]

    static func randomNote(_ index: Int, _ random: inout SplitMix64) -> QueryNote {
        func maybe<T>(_ make: () -> T) -> T? { Int.random(in: 0..<4, using: &random) == 0 ? nil : make() }
        func word() -> String { words.randomElement(using: &random)! }
        var note = QueryNote(id: "n\(index)")
        note.title = maybe { word() + (Bool.random(using: &random) ? " " + word() : "") }
        note.rank = maybe { Double(Int.random(in: -3...3, using: &random)) / 2 }
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
        return note
    }

    /// What a field holds, as the README's semantics see it.
    enum Value: Equatable {
        case missing, null, bool(Bool), number(Double), string(String), array([Value])
    }

    /// The fields, and what each holds: a query compares a field only with values of its kind
    /// (the store refuses the others), but `mixed` holds any kind.
    static let fields: [(field: Field, kind: String)] = [
        (Field("title"), "string"), (Field("rank"), "number"), (Field("count"), "number"), (Field("done"), "bool"),
        (Field("mixed"), "any"), (Field("tags"), "array"), (Field("place", "city"), "string"),
    ]

    static func value(_ note: QueryNote, _ field: Field) -> Value {
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

    /// A random predicate, and how it judges a note.
    static func randomPredicate(_ random: inout SplitMix64, depth: Int = 0) -> (QueryPredicate, (QueryNote) -> Bool) {
        if depth < 2, Int.random(in: 0..<3, using: &random) == 0 {
            let (left, judgeLeft) = randomPredicate(&random, depth: depth + 1)
            let (right, judgeRight) = randomPredicate(&random, depth: depth + 1)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return (left && right, { judgeLeft($0) && judgeRight($0) })
            case 1: return (left || right, { judgeLeft($0) || judgeRight($0) })
            default: return (!left, { !judgeLeft($0) })
            }
        }
        let (field, kind) = fields.randomElement(using: &random)!
        let word = words.randomElement(using: &random)!
        let choice = Int.random(in: 0..<9, using: &random)
        if choice == 0 {
            return (field.isNull, { [.missing, .null].contains(value($0, field)) })
        }
        if kind == "array" || (kind == "any" && choice == 3) {
            let wanted: QueryValue = kind == "array" || Bool.random(using: &random)
                ? QueryValue(word) : QueryValue(Double(Int.random(in: -2...2, using: &random)))
            return (field.contains(wanted), {
                guard case .array(let elements) = value($0, field) else { return false }
                return elements.contains { compare($0, wanted) == .orderedSame }
            })
        }
        if (kind == "string" || kind == "any") && choice == 1 {
            return (field.hasPrefix(word), {
                guard case .string(let text) = value($0, field) else { return false }
                return text.utf8.starts(with: word.utf8)
            })
        }
        if (kind == "string" || kind == "any") && choice == 2 {
            return (field.containsText(word), {
                guard case .string(let text) = value($0, field) else { return false }
                return folded(text).contains(folded(word)) || word.isEmpty
            })
        }
        let operand: QueryValue
        switch kind == "any" ? ["string", "number", "bool"].randomElement(using: &random)! : kind {
        case "string": operand = QueryValue(word)
        case "number": operand = QueryValue(Double(Int.random(in: -4...4, using: &random)) / 2)
        default: operand = QueryValue(Bool.random(using: &random))
        }
        let operations: [((Field, QueryValue) -> QueryPredicate, (ComparisonResult) -> Bool)] = [
            ({ $0 == $1 }, { $0 == .orderedSame }), ({ $0 < $1 }, { $0 == .orderedAscending }),
            ({ $0 <= $1 }, { $0 != .orderedDescending }), ({ $0 > $1 }, { $0 == .orderedDescending }),
            ({ $0 >= $1 }, { $0 != .orderedAscending }),
        ]
        if Int.random(in: 0..<6, using: &random) == 0 {
            return (field != operand, { compare(value($0, field), operand) != .orderedSame })
        }
        let (make, holds) = operations.randomElement(using: &random)!
        return (make(field, operand), { compare(value($0, field), operand).map(holds) ?? false })
    }

    /// ASCII letters lowercased, the rest as it is: UTF-8 bytes, so that `contains` is by bytes.
    static func folded(_ text: String) -> [UInt8] {
        text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
    }

    static func compareBytes(_ left: String, _ right: String) -> ComparisonResult {
        left.utf8.lexicographicallyPrecedes(right.utf8) ? .orderedAscending
            : right.utf8.lexicographicallyPrecedes(left.utf8) ? .orderedDescending : .orderedSame
    }

    /// How a stored value compares with an operand of one kind; `nil` for another kind.
    static func compare(_ stored: Value, _ operand: QueryValue) -> ComparisonResult? {
        switch (stored, operand.description.first) {
        case (.string(let text), "\""): return compareBytes(text, String(operand.description.dropFirst().dropLast()))
        case (.number(let number), let first?) where first == "-" || first.isNumber:
            let right = Double(operand.description)!
            return number < right ? .orderedAscending : number > right ? .orderedDescending : .orderedSame
        case (.bool(let flag), let first?) where first == "t" || first == "f":
            let right = operand.description == "true"
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
            case .array: return 4
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

    static func expected(_ notes: [QueryNote], _ judge: @escaping (QueryNote) -> Bool, sorts: [(Field, QuerySort.Order)], limit: Int?) -> [String] {
        var kept = notes.filter(judge)
        kept.sort { left, right in
            for (field, order) in sorts {
                let result = sortCompare(value(left, field), value(right, field))
                if result != .orderedSame { return (result == .orderedAscending) == (order == .ascending) }
            }
            return compareBytes(left.id, right.id) == .orderedAscending
        }
        return Array(kept.map(\.id).prefix(limit ?? .max))
    }

    static func randomQuery(_ random: inout SplitMix64) -> (Query<QueryNote>, (QueryNote) -> Bool, [(Field, QuerySort.Order)], Int?) {
        let (predicate, judge) = randomPredicate(&random)
        var query = Query(QueryNote.self).filter(predicate)
        var sorts: [(Field, QuerySort.Order)] = []
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            let field = fields.filter { $0.kind != "array" }.randomElement(using: &random)!.field
            let order: QuerySort.Order = Bool.random(using: &random) ? .ascending : .descending
            query = query.sorted(by: field, order)
            sorts.append((field, order))
        }
        let limit = Int.random(in: 0..<3, using: &random) == 0 ? Int.random(in: 0...10, using: &random) : nil
        if let limit { query = query.limit(limit) }
        return (query, judge, sorts, limit)
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

    @Test(arguments: [false, true])
    func randomQueriesEqualAFilterInMemory(unsaved: Bool) throws {
        for seed in 0..<Self.seeds {
            var random = SplitMix64(state: 0x5175_6572 &+ UInt64(seed))
            let garage = try TestEngine.garage()
            let notes = (0..<40).map { Self.randomNote($0, &random) }
            try Self.declareIndexes(garage, seed: seed)
            if unsaved { garage.isAutosaveEnabled = false }
            try garage.parkAll(notes)
            #expect(try garage.retrieveAll(QueryNote.self).count == notes.count)
            for _ in 0..<60 {
                let (query, judge, sorts, limit) = Self.randomQuery(&random)
                let expected = Self.expected(notes, judge, sorts: sorts, limit: limit)
                let described = "seed \(seed): \(query.predicate), sorted by \(sorts.map { "\($0.0) \($0.1)" }), limit \(limit.map(String.init) ?? "none")"
                #expect(try garage.identifiers(query) == expected, "\(described)")
                #expect(try garage.count(query) == Self.expected(notes, judge, sorts: [], limit: nil).count, "\(described)")
                #expect(try garage.retrieve(query).map(\.id) == expected, "\(described)")
            }
        }
    }

    /// Pages after cursors add up to the query's objects; objects parked and deleted between
    /// pages neither repeat an object nor skip one that was there throughout.
    @Test(arguments: [false, true])
    func pagesAddUpAndStayStableWhileTheStoreChanges(unsaved: Bool) throws {
        for seed in 0..<Self.seeds {
            var random = SplitMix64(state: 0x5061_6765 &+ UInt64(seed))
            let garage = try TestEngine.garage()
            let notes = (0..<40).map { Self.randomNote($0, &random) }
            try Self.declareIndexes(garage, seed: seed)
            if unsaved { garage.isAutosaveEnabled = false }
            try garage.parkAll(notes)
            for round in 0..<12 {
                let (query, judge, sorts, _) = Self.randomQuery(&random)
                let size = Int.random(in: 1...7, using: &random)
                let paged = query.limit(size)
                let expected = Self.expected(notes, judge, sorts: sorts, limit: nil)
                let described = "seed \(seed) round \(round): \(query.predicate), sorted by \(sorts.map { "\($0.0) \($0.1)" }), pages of \(size)"
                var seen: [String] = []
                var page = try garage.retrievePage(paged)
                seen += page.objects.map(\.id)
                while let next = page.next {
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
                while let next = first.next {
                    first = try garage.retrievePage(paged, after: next)
                    later += first.objects.map(\.id)
                }
                #expect(Set(later).count == later.count, "no object twice: \(described)")
                #expect(stable.isSubset(of: Set(later)), "no object skipped: \(described)")
                for note in added { try garage.delete(QueryNote.self, identifier: note.id) }
                if let gone = expected.last, !stable.contains(gone), let note = notes.first(where: { $0.id == gone }) {
                    try garage.park(note)
                }
            }
        }
    }
}

