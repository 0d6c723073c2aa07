import Foundation

/// An index the app declared on stored properties of a type (``Garage/index(_:on:)-8c14r``): the
/// store keeps the properties' values in order, so that a query that compares or sorts by them
/// reads the index instead of every object of the type.
public struct QueryIndex: Sendable, Hashable, CustomStringConvertible {
    /// The stored type name of the indexed objects.
    public var typeName: String
    /// The indexed properties, in the index's order.
    public var fields: [Field]
    /// Whether this is the type's text index (``Garage/textIndex(_:on:)-6jtya``), for text
    /// searches, rather than an index of values for comparisons and orders.
    public var isText: Bool

    public var description: String {
        "\(typeName)(\(fields.map(\.description).joined(separator: ", ")))" + (isText ? " text" : "")
    }

    /// Makes one of the given values, each stored as given.
    package init(typeName: String, fields: [Field], isText: Bool) {
        self.typeName = typeName
        self.fields = fields
        self.isText = isText
    }
}

/// An index as the store records it and an engine creates it: its name, its type, and each
/// field with the kind of value the type's JSON holds there (`.text` for each field of a text
/// index). The engines' value indexes order every kind, by rank then value, as the rule does.
package struct QueryIndexDefinition: Sendable, Hashable, Codable {
    /// The kind of value an indexed field holds, as the type's JSON encodes it (dates as the
    /// garage writes them).
    package enum Kind: String, Sendable, Hashable, Codable {
        case string, number, bool
        /// Words of the strings (and arrays of strings) of a text index.
        case text
    }

    /// The engine's name of the index: `garage_query_` and a hash of the rest.
    package var name: String
    package var typeName: String
    package var paths: [[String]]
    package var kinds: [Kind]

    package var fields: [Field] { paths.map { Field(path: $0) } }
    /// Whether this is a text index (its kinds `.text`).
    package var isText: Bool { kinds.first == .text }

    package init(typeName: String, fields: [Field], kinds: [Kind]) {
        self.typeName = typeName
        paths = fields.map(\.path)
        self.kinds = kinds
        // A stable name from the definition (FNV-1a, 64 bits): the same index, the same name.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        let text = kinds.first == .text ? "\u{1C}text" : ""
        for byte in "\(typeName)\u{1F}\(paths.map { $0.joined(separator: "\u{1E}") }.joined(separator: "\u{1D}"))\(text)".utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        name = (kinds.first == .text ? "garage_text_" : "garage_query_") + String(hash, radix: 16)
    }

    /// The store's fact that records its query indexes: a JSON array of their definitions.
    package static let fact = "query_indexes"

    /// The definitions the fact's `text` records (none when it is `nil`).
    package static func recorded(in text: String?) throws -> [QueryIndexDefinition] {
        guard let text else { return [] }
        return try JSONDecoder().decode([QueryIndexDefinition].self, from: Data(text.utf8))
    }
}

extension RowQuery {
    /// The comparisons every match makes (those `&&` joins at the top of the predicate), with a
    /// value: the engines write each on the expressions an index of its field holds (SQLite
    /// instead of the comparison, PostgreSQL beside it), which their planners can answer from
    /// the index (each term is true exactly where its comparison is).
    package var requiredComparisons: [(field: Field, comparison: QueryPredicate.Comparison, value: QueryValue.Content)] {
        func collect(_ node: QueryPredicate.Node) -> [(field: Field, comparison: QueryPredicate.Comparison, value: QueryValue.Content)] {
            switch node {
            case .and(let list): return list.flatMap(collect)
            case .compare(let field, let comparison, let value) where value != .null: return [(field, comparison, value)]
            default: return []
            }
        }
        return collect(predicate)
    }
}
