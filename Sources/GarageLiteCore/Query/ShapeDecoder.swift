import Foundation

/// The decoder that learns a type's ``QueryShape``: it answers each request with a
/// placeholder (an empty string, zero, `false`, one element of an array, the first case of a
/// `CaseIterable` enum) and writes down the key and the kind asked for.
package final class ShapeDecoder: Decoder {
    /// The shape of one value, as the requests made of it tell.
    package final class Node {
        package var kind: QueryShape = .unknown
        package var keys: [String: Node] = [:]
        package var keyOrder: [String] = []
        package var isKeyed = false
        package var isOpen = false
        package var element: Node?
        package var isArray = false

        package func child(_ key: String) -> Node {
            if let node = keys[key] { return node }
            let node = Node()
            keys[key] = node
            keyOrder.append(key)
            return node
        }

        package var shape: QueryShape {
            if isKeyed { return .object(keys.mapValues(\.shape), isOpen: isOpen) }
            if isArray { return .array(element?.shape ?? .unknown) }
            return kind
        }
    }

    package let node: Node
    /// The types being decoded, outermost first: a type met again inside itself is not entered.
    package let stack: [ObjectIdentifier]
    package let codingPath: [any CodingKey]
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package init(node: Node, stack: [ObjectIdentifier], codingPath: [any CodingKey]) {
        self.node = node
        self.stack = stack
        self.codingPath = codingPath
    }

    /// The shape of `type`'s JSON.
    package static func shape<T: Decodable>(of type: T.Type, isRoot: Bool) -> QueryShape {
        let node = Node()
        _ = try? T(from: ShapeDecoder(node: node, stack: [ObjectIdentifier(type)], codingPath: []))
        return node.shape
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        node.isKeyed = true
        return KeyedDecodingContainer(Keyed<Key>(decoder: self))
    }

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        node.isArray = true
        return Unkeyed(decoder: self)
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer {
        Single(decoder: self)
    }

    /// A placeholder of `type` decoded into `node`: a kind the garage writes as a string or a
    /// number is recorded as such; a nested `Identifiable` as a reference; another type is
    /// decoded from a decoder of its own.
    package func placeholder<T: Decodable>(_ type: T.Type, into node: Node, key: (any CodingKey)?) throws -> T {
        if let value = Self.leaf(type, node) { return value }
        if let iterable = type as? any CaseIterable.Type, let first = Self.firstCase(iterable) as? T {
            node.kind = Self.kind(of: first)
            return first
        }
        let isReference = !stack.isEmpty && type is any Identifiable.Type && !(type is any InlineIdentifiable.Type)
        guard !stack.contains(ObjectIdentifier(type)) else {
            node.kind = isReference ? .reference(Self.name(type)) : .unknown
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "a type inside itself"))
        }
        let inner = ShapeDecoder(node: node, stack: stack + [ObjectIdentifier(type)], codingPath: codingPath + (key.map { [$0] } ?? []))
        defer {
            if isReference {
                node.kind = .reference(Self.name(type))
                node.isKeyed = false
                node.isArray = false
            } else if !node.isKeyed && !node.isArray {
                // A type of its own that decodes one value may ask for one kind, then, when that
                // fails, another (a value of several kinds): its placeholder answered the first.
                node.kind = .unknown
            }
        }
        return try T(from: inner)
    }

    private static func name(_ type: Any.Type) -> String {
        (try? Identity.typeName(type)) ?? String(describing: type)
    }

    private static func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? {
        type.allCases.first
    }

    private static func kind(of value: Any) -> QueryShape {
        guard let encodable = value as? any Encodable,
              let data = try? JSONEncoder().encode(Wrapper(value: encodable)),
              let text = String(data: data, encoding: .utf8) else { return .unknown }
        let inner = text.dropFirst("{\"value\":".count)
        if inner.hasPrefix("\"") { return .string }
        if inner.hasPrefix("true") || inner.hasPrefix("false") { return .bool }
        if let first = inner.first, first == "-" || first.isNumber { return .number }
        return .unknown
    }

    private struct Wrapper: Encodable {
        var value: any Encodable

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(value, forKey: .value)
        }

        enum Key: CodingKey { case value }
    }

    /// The placeholder of a type the garage writes as one JSON value, recorded in `node`.
    private static func leaf<T>(_ type: T.Type, _ node: Node) -> T? {
        let value: Any
        switch type {
        case is String.Type: node.kind = .string; value = ""
        case is Bool.Type: node.kind = .bool; value = false
        case is Double.Type: node.kind = .number; value = 0.0
        case is Float.Type: node.kind = .number; value = Float(0)
        case is Int.Type: node.kind = .number; value = 0
        case is Int8.Type: node.kind = .number; value = Int8(0)
        case is Int16.Type: node.kind = .number; value = Int16(0)
        case is Int32.Type: node.kind = .number; value = Int32(0)
        case is Int64.Type: node.kind = .number; value = Int64(0)
        case is UInt.Type: node.kind = .number; value = UInt(0)
        case is UInt8.Type: node.kind = .number; value = UInt8(0)
        case is UInt16.Type: node.kind = .number; value = UInt16(0)
        case is UInt32.Type: node.kind = .number; value = UInt32(0)
        case is UInt64.Type: node.kind = .number; value = UInt64(0)
        case is Decimal.Type: node.kind = .number; value = Decimal(0)
        case is Date.Type: node.kind = .date; value = Date(timeIntervalSinceReferenceDate: 0)
        case is Data.Type: node.kind = .unknown; value = Data()
        case is UUID.Type: node.kind = .string; value = UUID()
        case is URL.Type: node.kind = .string; value = URL(fileURLWithPath: "/")
        default: return nil
        }
        return value as? T
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: ShapeDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        /// A type that lists its keys (a dictionary, an enum with associated values) has keys
        /// the shape can't know.
        var allKeys: [Key] {
            decoder.node.isOpen = true
            return []
        }

        func contains(_ key: Key) -> Bool { true }

        func decodeNil(forKey key: Key) throws -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            do {
                return try decoder.placeholder(type, into: decoder.node.child(key.stringValue), key: key)
            } catch {
                decoder.node.isOpen = true
                throw error
            }
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            do {
                return try decoder.placeholder(type, into: decoder.node.child(key.stringValue), key: key)
            } catch {
                // An optional property that can't be made (a type inside itself): absent.
                return nil
            }
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey> {
            let inner = ShapeDecoder(node: decoder.node.child(key.stringValue), stack: decoder.stack, codingPath: codingPath + [key])
            return try inner.container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            let inner = ShapeDecoder(node: decoder.node.child(key.stringValue), stack: decoder.stack, codingPath: codingPath + [key])
            return try inner.unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { decoder }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            ShapeDecoder(node: decoder.node.child(key.stringValue), stack: decoder.stack, codingPath: codingPath + [key])
        }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        let decoder: ShapeDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }
        var count: Int? { nil }
        var currentIndex = 0
        /// One element: enough to learn its shape.
        var isAtEnd: Bool { currentIndex > 0 }

        private mutating func element() -> Node {
            currentIndex += 1
            if let element = decoder.node.element { return element }
            let element = Node()
            decoder.node.element = element
            return element
        }

        mutating func decodeNil() throws -> Bool { false }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try decoder.placeholder(type, into: element(), key: nil)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            try ShapeDecoder(node: element(), stack: decoder.stack, codingPath: codingPath).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try ShapeDecoder(node: element(), stack: decoder.stack, codingPath: codingPath).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            ShapeDecoder(node: element(), stack: decoder.stack, codingPath: codingPath)
        }
    }

    private struct Single: SingleValueDecodingContainer {
        let decoder: ShapeDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        func decodeNil() -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try decoder.placeholder(type, into: decoder.node, key: nil)
        }
    }
}
