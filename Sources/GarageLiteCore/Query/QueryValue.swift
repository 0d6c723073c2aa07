import Foundation

/// A value a query compares a stored property with: a string, a number, a boolean or null,
/// as the object's JSON holds it, or a date.
///
/// Write it as a literal or a Swift value: `Field("title") == "Milk"`, `Field("rank") > 3`,
/// `Field("done") == true`, `Field("due") == nil`, `Field("due") < Date()`.
public struct QueryValue: Sendable, Hashable, CustomStringConvertible {
    /// The value's kind and content.
    package enum Content: Sendable, Hashable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
    }

    package let content: Content

    package init(_ content: Content) {
        self.content = content
    }

    /// A string value.
    public init(_ value: String) { content = .string(value) }
    /// A number value (JSON numbers compare as numbers, whatever their Swift type).
    public init(_ value: Double) { content = .number(value) }
    /// A number value.
    public init<I: BinaryInteger>(_ value: I) { content = .number(Double(value)) }
    /// A boolean value.
    public init(_ value: Bool) { content = .bool(value) }
    /// A date, compared as the garage writes dates: by default a number, the seconds since
    /// 2001-01-01 (`timeIntervalSinceReferenceDate`), so that dates compare in time order; with
    /// another `dateEncodingStrategy`, the date is written as that strategy writes it where the
    /// property holds dates (an ISO 8601 string compares in time order only within one time
    /// zone's format).
    public init(_ value: Date) { content = .number(value.timeIntervalSinceReferenceDate) }
    /// JSON's null, which a missing property equals too.
    public static let null = QueryValue(.null)

    public var description: String {
        switch content {
        case .null: return "null"
        case .bool(let value): return "\(value)"
        case .number(let value): return value == value.rounded() && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
        case .string(let value): return "\"\(value)\""
        }
    }
}

extension QueryValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self.init(value) }
    public init(integerLiteral value: Int) { self.init(value) }
    public init(floatLiteral value: Double) { self.init(value) }
    public init(booleanLiteral value: Bool) { self.init(value) }
    public init(nilLiteral: ()) { self = .null }
}

/// A Swift value a query can compare a stored property with (``QueryValue``): `String`,
/// the integer types, `Double`, `Float`, `Bool`, `Date`, and optionals of them (`nil` is null).
public protocol QueryValueConvertible {
    /// The value as a query compares it.
    var queryValue: QueryValue { get }
}

extension QueryValue: QueryValueConvertible {
    public var queryValue: QueryValue { self }
}

extension String: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(self) }
}

extension Substring: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(String(self)) }
}

extension Bool: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(self) }
}

extension Double: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(self) }
}

extension Float: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(Double(self)) }
}

extension Int: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(self) }
}

extension Int64: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(self) }
}

extension Int32: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(self) }
}

extension UInt: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(self) }
}

extension Date: QueryValueConvertible {
    public var queryValue: QueryValue { QueryValue(self) }
}

extension Optional: QueryValueConvertible where Wrapped: QueryValueConvertible {
    public var queryValue: QueryValue { self?.queryValue ?? .null }
}
