/// A parsed or to-be-written JSON document.
///
/// Numbers keep their text, so that `Int64`, `UInt64` and `Decimal` values round-trip
/// without going through `Double`.
///
/// Two objects are equal when they have the same members, whatever their order.
package enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    /// Members in document order.
    case object([JSONMember])

    /// A short name of the kind of value, for error messages.
    package var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

extension JSONValue {
    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            let left = MemberLookup(a), right = MemberLookup(b)
            let keys = Set(a.map(\.key))
            return keys == Set(b.map(\.key)) && keys.allSatisfy { left[$0] == right[$0] }
        default: return false
        }
    }
}

/// One member of a JSON object.
package struct JSONMember: Equatable, Sendable {
    package var key: String
    package var value: JSONValue

    /// Makes one of the given values, each stored as given.
    package init(key: String, value: JSONValue) {
        self.key = key
        self.value = value
    }
}
