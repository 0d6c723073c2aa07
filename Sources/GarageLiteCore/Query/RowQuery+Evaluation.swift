import Foundation

// The meaning of a query, once, in Swift: which objects match and in what order, read from
// each object's JSON. Engines answer queries with SQL (SQLite's `json_extract`, PostgreSQL's
// `json` operators), a faster path that `QueryRuleTests` holds to this one with random objects
// and random queries; the store also answers with it directly where SQL can't see the rows (a
// garage's unsaved changes).
extension RowQuery {
    /// Whether an object whose JSON is `json`, in a row of `status` that references the objects
    /// `references` (read when the query ``readsReferences``), matches the query.
    package func matches(_ json: JSONValue, status: SyncStatus, references: [ObjectKey]) -> Bool {
        matches(predicate, json, status, references)
    }

    private func matches(_ node: QueryPredicate.Node, _ json: JSONValue, _ status: SyncStatus, _ references: [ObjectKey]) -> Bool {
        switch node {
        case .all: return true
        case .references(let typeName, let identifier):
            return references.contains(ObjectKey(typeName: typeName, identifier: identifier))
        case .referenceMatches:
            return false        // answered as `referenceAmong` (StoreView.resolvingReferences)
        case .referenceAmong(let field, let identifiers):
            switch Self.lookup(field, in: json) {
            case .string(let identifier)?: return identifiers.contains(identifier)
            case .array(let elements)?:
                return elements.contains { if case .string(let identifier) = $0 { identifiers.contains(identifier) } else { false } }
            default: return false
            }
        case .syncStatus(let wanted): return status == wanted
        case .textMatches(let search): return relevance(search, json) != nil
        case .compare(let field, let comparison, let value):
            guard let stored = Self.lookup(field, in: json), let order = Self.compare(stored, value) else { return false }
            switch comparison {
            case .equal: return order == .orderedSame
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            case .greaterOrEqual: return order != .orderedAscending
            }
        case .isNull(let field):
            guard let stored = Self.lookup(field, in: json) else { return true }
            return stored == .null
        case .hasPrefix(let field, let prefix):
            guard case .string(let text)? = Self.lookup(field, in: json) else { return false }
            return text.utf8.starts(with: prefix.utf8)
        case .containsText(let field, let needle):
            guard case .string(let text)? = Self.lookup(field, in: json) else { return false }
            return Self.contains(Self.asciiLowercased(text), Self.asciiLowercased(needle))
        case .arrayContains(let field, let value):
            guard case .array(let elements)? = Self.lookup(field, in: json) else { return false }
            return elements.contains { Self.compare($0, value) == .orderedSame }
        case .and(let list): return list.allSatisfy { matches($0, json, status, references) }
        case .or(let list): return list.contains { matches($0, json, status, references) }
        case .not(let inner): return !matches(inner, json, status, references)
        case .refused: return false     // refused before any store answers (`RowQuery.problem(in:)`)
        }
    }

    /// Whether the query is sorted by relevance (to its text search).
    package var sortsByRelevance: Bool { sortOrders.contains { $0.key == .relevance } }

    /// Whether the predicate reads the objects' references (`.references`).
    package var readsReferences: Bool {
        func reads(_ node: QueryPredicate.Node) -> Bool {
            switch node {
            case .references: return true
            case .and(let list), .or(let list): return list.contains(where: reads)
            case .not(let inner): return reads(inner)
            default: return false
            }
        }
        return reads(predicate)
    }

    /// How relevant an object whose JSON is `json` is to `search` (how many of the words of its
    /// indexed text the search finds), or `nil` when it doesn't match. A store resolves the
    /// query's text index before it answers (`RowStatements.resolvingTextIndex`).
    private func relevance(_ search: String, _ json: JSONValue) -> Int? {
        guard let textIndex else { return nil }
        return TextSearch.hits(TextSearch.terms(search), in: TextSearch.text(json, textIndex.fields))
    }

    /// The value at `field` in `json`; `nil` when missing (a key absent, or a value on the way
    /// that is not an object).
    package static func lookup(_ field: Field, in json: JSONValue) -> JSONValue? {
        var value = json
        for key in field.path {
            // Keys by their bytes, as the engines find them: "é" and "e" + U+0301 are two keys.
            guard case .object(let members) = value, let member = members.first(where: { $0.key.utf8.elementsEqual(key.utf8) }) else {
                return nil
            }
            value = member.value
        }
        return value
    }

    /// How `stored` compares with `value`, when both are of one kind; `nil` otherwise.
    private static func compare(_ stored: JSONValue, _ value: QueryValue.Content) -> ComparisonResult? {
        switch (stored, value) {
        case (.string(let left), .string(let right)): return compareBytes(left, right)
        case (.number(let text), .number(let right)):
            guard let left = Double(text) else { return nil }
            return left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
        case (.bool(let left), .bool(let right)): return left == right ? .orderedSame : left ? .orderedDescending : .orderedAscending
        default: return nil
        }
    }

    /// Strings in the order of their UTF-8 bytes, as SQLite's `BINARY` and PostgreSQL's `"C"`
    /// collations order them.
    package static func compareBytes(_ left: String, _ right: String) -> ComparisonResult {
        var leftBytes = left.utf8.makeIterator(), rightBytes = right.utf8.makeIterator()
        while true {
            switch (leftBytes.next(), rightBytes.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let l?, let r?) where l != r: return l < r ? .orderedAscending : .orderedDescending
            default: continue
            }
        }
    }

    private static func asciiLowercased(_ text: String) -> [UInt8] {
        text.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
    }

    private static func contains(_ text: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= text.count else { return false }
        for start in 0...(text.count - needle.count) where text[start..<(start + needle.count)].elementsEqual(needle) {
            return true
        }
        return false
    }

    // MARK: - Order

    /// What an object sorts by, for one of the query's orders: its kind's rank (missing or
    /// null, boolean, number, string, anything else), then its value within the kind.
    package enum SortValue: Sendable, Hashable, Codable {
        case none
        case bool(Bool)
        case number(Double)
        case string(String)
        case other

        package var rank: Int {
            switch self {
            case .none: return 0
            case .bool: return 1
            case .number: return 2
            case .string: return 3
            case .other: return 4
            }
        }

        package static func of(_ value: JSONValue?) -> SortValue {
            switch value {
            case nil, .null?: return .none
            case .bool(let bool)?: return .bool(bool)
            case .number(let text)?: return Double(text).map(SortValue.number) ?? .other
            case .string(let string)?: return .string(string)
            case .array?, .object?: return .other
            }
        }

        package func compare(_ other: SortValue) -> ComparisonResult {
            if rank != other.rank { return rank < other.rank ? .orderedAscending : .orderedDescending }
            switch (self, other) {
            case (.bool(let left), .bool(let right)): return left == right ? .orderedSame : left ? .orderedDescending : .orderedAscending
            case (.number(let left), .number(let right)): return left < right ? .orderedAscending : left > right ? .orderedDescending : .orderedSame
            case (.string(let left), .string(let right)): return RowQuery.compareBytes(left, right)
            default: return .orderedSame
            }
        }
    }

    /// The values an object sorts by, one per order of the query.
    package func sortValues(_ json: JSONValue, modificationDate: Date) -> [SortValue] {
        sortOrders.map { sort in
            switch sort.key {
            case .field(let field): return SortValue.of(Self.lookup(field, in: json))
            case .modificationDate: return .number(modificationDate.timeIntervalSince1970)
            case .relevance: return textSearch.flatMap { relevance($0, json) }.map { .number(Double($0)) } ?? .none
            }
        }
    }

    /// Whether the object with `left` values and identifier comes before the one with `right`.
    package func precedes(_ left: (values: [SortValue], identifier: String), _ right: (values: [SortValue], identifier: String)) -> Bool {
        for (index, sort) in sortOrders.enumerated() {
            let order = left.values[index].compare(right.values[index])
            if order != .orderedSame { return (order == .orderedAscending) == (sort.order == .ascending) }
        }
        return Self.compareBytes(left.identifier, right.identifier) == .orderedAscending
    }
}

extension QueryValue.Content {
    /// The rank of the value's kind in an order (``RowQuery/SortValue/rank``), which is the kind
    /// of the stored values a comparison with it matches; `nil` for null, which matches none.
    package var rank: Int? {
        switch self {
        case .bool: return 1
        case .number: return 2
        case .string: return 3
        case .null: return nil
        }
    }
}
