/// A parsed or to-be-written JSON document.
///
/// Numbers keep their text, so that `Int64`, `UInt64` and `Decimal` values round-trip
/// without going through `Double`.
enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// A short name of the kind of value, for error messages.
    var kindName: String {
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
