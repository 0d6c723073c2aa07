import Foundation

/// A property whose values are of several types, known to the garage: a protocol-typed value,
/// or an array, optional or dictionary of them. Each value is stored with its type name and
/// read back as its own type.
///
/// ```swift
/// protocol Pet: Codable { var name: String { get } }
/// struct Dog: Pet { var name: String; var breed: String }
/// struct Cat: Pet { var name: String; var indoor: Bool }
///
/// struct Household: Codable, Identifiable {
///     var id: String
///     @Polymorphic var pets: [any Pet]
///     @Polymorphic var favorite: (any Pet)?
/// }
///
/// try garage.register(Dog.self, Cat.self)
/// try garage.park(Household(id: "h1", pets: [Dog(name: "Rex", breed: "collie"), Cat(name: "Tom", indoor: true)],
///                           favorite: nil))
/// ```
///
/// `Codable` can't do this alone: it needs the concrete type to decode. Each value is stored as
/// `{"@type": "Dog", "@value": {...}}`; an `Identifiable` value is parked as its own row, as
/// everywhere, and the `@value` is its reference. Parking a value whose type isn't registered
/// throws ``GarageError/unregisteredType(typeName:declaredType:)``, and retrieving one names the
/// type to register.
///
/// Subclasses need no wrapper: an instance of a registered subclass, parked where its class
/// is declared (a `[Person]` holding `Student`s), reads back as the subclass.
///
/// The values decode only in a garage, which knows the registered types; `JSONEncoder`
/// encodes them as the garage does.
@propertyWrapper
public struct Polymorphic<Value>: Codable {
    /// The value: one of the registered types, or a collection of them.
    public var wrappedValue: Value

    /// A property holding `wrappedValue`.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }

    /// Encodes each value with its type name.
    public func encode(to encoder: any Encoder) throws {
        if let array = Value.self as? any PolymorphicArray.Type {
            var container = encoder.unkeyedContainer()
            for element in array.elements(of: wrappedValue) {
                try Self.encodeOne(element, to: container.superEncoder())
            }
        } else if let dictionary = Value.self as? any PolymorphicDictionary.Type {
            var container = encoder.container(keyedBy: GarageCodingKey.self)
            for (key, element) in dictionary.entries(of: wrappedValue) {
                try Self.encodeOne(element, to: container.superEncoder(forKey: GarageCodingKey(stringValue: key)))
            }
        } else {
            try Self.encodeOne(wrappedValue, to: encoder)
        }
    }

    /// Decodes each value as the registered type its name stands for.
    public init(from decoder: any Decoder) throws {
        if let array = Value.self as? any PolymorphicArray.Type {
            var container = try decoder.unkeyedContainer()
            var elements: [Any?] = []
            while !container.isAtEnd {
                elements.append(try Self.decodeOne(array.elementType, from: container.superDecoder()))
            }
            wrappedValue = try Self.cast(array.make(elements), decoder)
        } else if let dictionary = Value.self as? any PolymorphicDictionary.Type {
            let container = try decoder.container(keyedBy: GarageCodingKey.self)
            var entries: [String: Any?] = [:]
            for key in container.allKeys {
                entries[key.stringValue] = try Self.decodeOne(dictionary.valueType, from: container.superDecoder(forKey: key))
            }
            wrappedValue = try Self.cast(dictionary.make(entries), decoder)
        } else {
            wrappedValue = try Self.cast(try Self.decodeOne(Value.self, from: decoder), decoder)
        }
    }

    private static func cast(_ value: Any?, _ decoder: any Decoder) throws -> Value {
        guard let value = value as? Value else {
            throw DecodingError.typeMismatch(Value.self, .init(
                codingPath: decoder.codingPath,
                debugDescription: "The stored values are not \(Identity.displayName(Value.self))."))
        }
        return value
    }

    /// Encodes one value (or `nil`) with its type name.
    private static func encodeOne(_ value: Any, to encoder: any Encoder) throws {
        if let optional = value as? any PolymorphicOptional {
            guard let wrapped = optional.wrapped else {
                var container = encoder.singleValueContainer()
                try container.encodeNil()
                return
            }
            return try encodeOne(wrapped, to: encoder)
        }
        // The value's own type: an instance's class, not the type of the existential it came in.
        guard let encodable = type(of: value) as? any Encodable.Type else {
            throw EncodingError.invalidValue(value, .init(
                codingPath: encoder.codingPath,
                debugDescription: "\(Identity.displayName(type(of: value))) is not Encodable."))
        }
        try encodeTagged(encodable, value, to: encoder)
    }

    private static func encodeTagged<U: Encodable>(_ type: U.Type, _ instance: Any, to encoder: any Encoder) throws {
        let value = instance as! U
        let name = try Identity.typeName(U.self)
        if let reference = encoder as? ReferenceEncoder,
           !reference.row.graph.registry.contains(ObjectIdentifier(U.self), named: name) {
            throw GarageError.unregisteredType(typeName: Identity.fullName(U.self), declaredType: Identity.fullName(Value.self))
        }
        var container = encoder.container(keyedBy: GarageCodingKey.self)
        try container.encode(name, forKey: GarageCodingKey(stringValue: RegisteredTypes.typeKey))
        try container.encode(value, forKey: GarageCodingKey(stringValue: RegisteredTypes.valueKey))
    }

    /// Decodes one value (`nil` for a null where `declared` is optional) as its registered type.
    private static func decodeOne(_ declared: Any.Type, from decoder: any Decoder) throws -> Any? {
        guard let reference = decoder as? ReferenceDecoder else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "A Polymorphic value decodes only in a Garage, which knows the registered types."))
        }
        if reference.value.isNull, declared is any PolymorphicOptional.Type {
            return nil
        }
        guard let (typeName, value) = RegisteredTypes.tagged(reference.value) else {
            throw DecodingError.typeMismatch(declared, .init(
                codingPath: decoder.codingPath,
                debugDescription: "Expected a value stored with its type name ({\"@type\": ..., \"@value\": ...}) but "
                    + "found \(reference.value.kindName)."))
        }
        return try reference.graph.unboxRegistered(typeName: typeName, from: value, codingPath: reference.path)
    }
}

extension Polymorphic: Sendable where Value: Sendable {}

extension KeyedDecodingContainer {
    /// A ``Polymorphic`` optional whose key is missing (a property added to the model since
    /// the object was stored) reads as `nil`.
    public func decode<V>(_ type: Polymorphic<V?>.Type, forKey key: Key) throws -> Polymorphic<V?> {
        try decodeIfPresent(type, forKey: key) ?? Polymorphic(wrappedValue: nil)
    }

    /// A ``Polymorphic`` array whose key is missing (a property added to the model since the
    /// object was stored) reads as empty.
    public func decode<E>(_ type: Polymorphic<[E]>.Type, forKey key: Key) throws -> Polymorphic<[E]> {
        try decodeIfPresent(type, forKey: key) ?? Polymorphic(wrappedValue: [])
    }

    /// A ``Polymorphic`` dictionary whose key is missing (a property added to the model since
    /// the object was stored) reads as empty.
    public func decode<E>(_ type: Polymorphic<[String: E]>.Type, forKey key: Key) throws -> Polymorphic<[String: E]> {
        try decodeIfPresent(type, forKey: key) ?? Polymorphic(wrappedValue: [:])
    }
}

/// An optional, for ``Polymorphic``: `nil` is stored as null.
package protocol PolymorphicOptional {
    /// The value, or `nil`.
    var wrapped: Any? { get }
}

extension Optional: PolymorphicOptional {
    package var wrapped: Any? { self.map { $0 as Any } }
}

/// An array, for ``Polymorphic``: each element is stored with its type name.
package protocol PolymorphicArray {
    static var elementType: Any.Type { get }
    static func elements(of value: Any) -> [Any]
    static func make(_ elements: [Any?]) -> Any?
}

extension Array: PolymorphicArray {
    package static var elementType: Any.Type { Element.self }

    package static func elements(of value: Any) -> [Any] {
        (value as? Self)?.map { $0 as Any } ?? []
    }

    package static func make(_ elements: [Any?]) -> Any? {
        var array: [Element] = []
        array.reserveCapacity(elements.count)
        for element in elements {
            guard let element = element as? Element else { return nil }
            array.append(element)
        }
        return array
    }
}

/// A dictionary with string keys, for ``Polymorphic``: each value is stored with its type name.
package protocol PolymorphicDictionary {
    static var valueType: Any.Type { get }
    static func entries(of value: Any) -> [(String, Any)]
    static func make(_ entries: [String: Any?]) -> Any?
}

extension Dictionary: PolymorphicDictionary where Key == String {
    package static var valueType: Any.Type { Value.self }

    package static func entries(of value: Any) -> [(String, Any)] {
        (value as? Self)?.sorted { $0.key < $1.key }.map { ($0.key, $0.value as Any) } ?? []
    }

    package static func make(_ entries: [String: Any?]) -> Any? {
        var dictionary: [String: Value] = [:]
        for (key, value) in entries {
            guard let value = value as? Value else { return nil }
            dictionary[key] = value
        }
        return dictionary
    }
}
