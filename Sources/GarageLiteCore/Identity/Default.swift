import Foundation

/// A value to use where stored JSON has none: the default of a ``Default`` property.
///
/// ```swift
/// enum Medium: DefaultValue { static let defaultValue = "paperback" }
/// ```
public protocol DefaultValue {
    /// The type of the value.
    associatedtype Value: Codable
    /// The value a ``Default`` property takes when the stored JSON has no key for it.
    static var defaultValue: Value { get }
}

/// A property added to a model after objects of it were stored: the objects stored without it
/// read with `Provider`'s default, instead of failing to decode. No migration runs: the rows
/// stay as they are until parked again, then hold the property.
///
/// ```swift
/// struct Note: Codable, Identifiable {
///     var id: String
///     var text: String
///     @Default<FalseByDefault> var isPinned: Bool              // added in version 2
///     @Default<EmptyByDefault<[String]>> var tags: [String]    // added in version 3
/// }
/// ```
///
/// A property wrapper, rather than a decoder that supplies missing keys, because only the
/// model knows the value a missing key stands for, and because it works the same with a
/// plain `JSONDecoder`. A key that is missing, or `null`, takes the default. Ready providers:
/// ``FalseByDefault``, ``TrueByDefault``, ``ZeroByDefault``, ``EmptyByDefault``; declare your
/// own with ``DefaultValue``.
@propertyWrapper
public struct Default<Provider: DefaultValue>: Codable {
    /// The value.
    public var wrappedValue: Provider.Value

    /// The provider's default.
    public init() {
        wrappedValue = Provider.defaultValue
    }

    /// `wrappedValue`.
    public init(wrappedValue: Provider.Value) {
        self.wrappedValue = wrappedValue
    }

    /// Decodes the value itself.
    public init(from decoder: any Decoder) throws {
        wrappedValue = try decoder.singleValueContainer().decode(Provider.Value.self)
    }

    /// Encodes the value itself.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension Default: Sendable where Provider.Value: Sendable {}
extension Default: Equatable where Provider.Value: Equatable {}
extension Default: Hashable where Provider.Value: Hashable {}

extension KeyedDecodingContainer {
    /// A ``Default`` property whose key is missing (or `null`) takes its provider's default.
    public func decode<P>(_ type: Default<P>.Type, forKey key: Key) throws -> Default<P> {
        try decodeIfPresent(type, forKey: key) ?? Default()
    }
}

/// `false`: `@Default<FalseByDefault>`.
public enum FalseByDefault: DefaultValue {
    /// `false`.
    public static var defaultValue: Bool { false }
}

/// `true`: `@Default<TrueByDefault>`.
public enum TrueByDefault: DefaultValue {
    /// `true`.
    public static var defaultValue: Bool { true }
}

/// Zero of a numeric type: `@Default<ZeroByDefault<Int>>`.
public enum ZeroByDefault<Value: Codable & AdditiveArithmetic>: DefaultValue {
    /// `.zero`.
    public static var defaultValue: Value { .zero }
}

/// An empty collection or string: `@Default<EmptyByDefault<[String]>>`, `@Default<EmptyByDefault<String>>`.
public enum EmptyByDefault<Value: Codable & RangeReplaceableCollection>: DefaultValue {
    /// An empty value.
    public static var defaultValue: Value { Value() }
}
