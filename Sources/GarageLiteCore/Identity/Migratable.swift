import Foundation

/// A property that GarageStorage's Objective-C side may have stored as an anonymous nested
/// object (the text of its JSON, under `kGSAnonymousDataKey`), or that is stored as a plain
/// `Codable` value: it decodes from either. GarageStorage's property wrapper, kept so that its
/// models compile and read their stores unchanged.
///
/// ```swift
/// struct Person: Codable, Identifiable {
///     var id: String
///     @Migratable var address: Address?     // an Objective-C era row, or a Swift one
/// }
/// ```
///
/// Its value is optional: `nil` is stored as `null`, and a missing key or `null` reads as
/// `nil` (GarageStorage threw on them). It is written as the plain value, so an object parked
/// again no longer needs the wrapper. Under a garage, GarageLite's decoder reads the anonymous
/// form anywhere (see <doc:MigratingFromGarageStorage>); the wrapper matters for its own name,
/// and to read the form with a plain `JSONDecoder`.
@propertyWrapper
public struct Migratable<Value: Decodable>: Decodable {
    /// The value, or `nil`.
    public var wrappedValue: Value?

    /// A property without a value, as GarageStorage's.
    public init() {
        wrappedValue = nil
    }

    /// A property with `wrappedValue`.
    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    /// Decodes the plain value, or the anonymous form GarageStorage's Objective-C side stored.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            wrappedValue = nil
            return
        }
        do {
            wrappedValue = try container.decode(Value.self)
        } catch let plainError {
            // Outside a garage (a plain JSONDecoder): the anonymous form, unencrypted.
            guard let anonymous = try? container.decode(AnonymousObject.self) else { throw plainError }
            wrappedValue = try JSONDecoder().decode(Value.self, from: Data(anonymous.kGSAnonymousDataKey.utf8))
        }
    }
}

/// GarageStorage's Objective-C form of a nested object that is not identified.
private struct AnonymousObject: Decodable {
    let kGSAnonymousDataKey: String
}

extension Migratable: Encodable where Value: Encodable {
    /// Encodes the value as a plain value, or `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }
}

extension Migratable: Sendable where Value: Sendable {}
extension Migratable: Equatable where Value: Equatable {}
extension Migratable: Hashable where Value: Hashable {}

extension KeyedDecodingContainer {
    /// A ``Migratable`` property whose key is missing is `nil`, as an optional property is.
    public func decode<Value>(_ type: Migratable<Value>.Type, forKey key: Key) throws -> Migratable<Value> {
        try decodeIfPresent(type, forKey: key) ?? Migratable()
    }
}
