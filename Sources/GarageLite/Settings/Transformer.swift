import Foundation
import GarageLiteCore
import GarageLiteSQLite

/// A conversion of values, both ways: how a setting's value is stored when it is not stored as
/// itself.
///
/// ```swift
/// enum Theme: Int, Sendable { case light = 1, dark = 2 }
///
/// // Stored as 1 or 2.
/// let theme = SettingsKey<GlobalSettings, Theme>(
///     id: "theme", defaultValue: .light, transformer: RawRepresentableTransformer())
/// ```
///
/// ``transform(_:)`` runs when a value is stored, ``untransform(_:)`` when it is read; the
/// second should undo the first. Transformers chain with ``append(_:)``. Ready ones:
/// ``RawRepresentableTransformer`` and ``JSONTransformer``.
public protocol Transformer<Input, Output>: Sendable {
    /// The values the transformer takes: a setting's values.
    associatedtype Input
    /// What it makes of them: what is stored.
    associatedtype Output

    /// Converts a value to what is stored; throws when it can't.
    func transform(_ value: Input) throws -> Output

    /// Converts what is stored back to a value; throws when it can't (a raw value no longer
    /// among an enumeration's cases).
    func untransform(_ value: Output) throws -> Input
}

extension Transformer {
    /// This transformer, then `next`: its output is `next`'s input. Reading undoes both, in
    /// the opposite order.
    ///
    /// ```swift
    /// // A theme, as its raw value, as JSON data.
    /// let transformer = RawRepresentableTransformer<Theme>().append(JSONTransformer<Int>())
    /// ```
    public func append<Next: Transformer>(_ next: Next) -> ChainedTransformer<Self, Next> where Next.Input == Output {
        ChainedTransformer(first: self, second: next)
    }
}

/// Two transformers, one after the other: made with ``Transformer/append(_:)``.
public struct ChainedTransformer<First: Transformer, Second: Transformer>: Transformer
where First.Output == Second.Input {
    /// The transformer that runs first when a value is stored.
    public let first: First
    /// The transformer that runs second when a value is stored, and first when it is read.
    public let second: Second

    /// `first`, then `second`; ``Transformer/append(_:)`` reads better.
    public init(first: First, second: Second) {
        self.first = first
        self.second = second
    }

    /// `second.transform(first.transform(value))`.
    public func transform(_ value: First.Input) throws -> Second.Output {
        try second.transform(first.transform(value))
    }

    /// `first.untransform(second.untransform(value))`.
    public func untransform(_ value: Second.Output) throws -> First.Input {
        try first.untransform(second.untransform(value))
    }
}

/// Stores a `RawRepresentable` value, such as an enumeration, as its raw value.
///
/// ```swift
/// enum Speed: String, Sendable { case slow, fast }
/// let speed = SettingsKey<GlobalSettings, Speed>(
///     id: "speed", defaultValue: .slow, transformer: RawRepresentableTransformer())   // "slow"
/// ```
///
/// Reading a raw value that names no value throws ``TransformerError/noValue(forRawValue:of:)``.
public struct RawRepresentableTransformer<Value: RawRepresentable>: Transformer {
    /// The transformer.
    public init() {}

    /// `value.rawValue`.
    public func transform(_ value: Value) -> Value.RawValue {
        value.rawValue
    }

    /// The value whose raw value is `rawValue`.
    ///
    /// - throws: ``TransformerError/noValue(forRawValue:of:)`` when there is none.
    public func untransform(_ rawValue: Value.RawValue) throws -> Value {
        guard let value = Value(rawValue: rawValue) else {
            throw TransformerError.noValue(forRawValue: String(describing: rawValue), of: Identity.displayName(Value.self))
        }
        return value
    }
}

/// Stores a `Codable` value as JSON data, made by Foundation's `JSONEncoder` (with sorted
/// keys) and read by its `JSONDecoder`.
///
/// ```swift
/// struct Window: Codable, Sendable { var width, height: Double }
/// let window = SettingsKey<GlobalSettings, Window>(
///     id: "window", defaultValue: Window(width: 800, height: 600), transformer: JSONTransformer())
/// ```
///
/// Useful as the last of a chain, or to keep a value's `Identifiable` parts inside the setting:
/// without it, a setting's value follows the reference rule, as any record's.
public struct JSONTransformer<Value: Codable>: Transformer {
    /// The transformer.
    public init() {}

    /// The JSON of `value`.
    public func transform(_ value: Value) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }

    /// The value whose JSON `data` is.
    public func untransform(_ data: Data) throws -> Value {
        try JSONDecoder().decode(Value.self, from: data)
    }
}

/// What the ready transformers throw.
public enum TransformerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The raw value `rawValue` (as text) names no value of the type `type`:
    /// ``RawRepresentableTransformer/untransform(_:)``.
    case noValue(forRawValue: String, of: String)

    /// What went wrong.
    public var description: String {
        switch self {
        case let .noValue(rawValue, type): "\(rawValue) is the raw value of no \(type)"
        }
    }
}
