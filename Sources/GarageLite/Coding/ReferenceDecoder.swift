import Foundation

/// The `Decoder` the garage hands to `init(from:)`: it reads one JSON value and resolves
/// reference stubs through its ``GraphDecoder``.
struct ReferenceDecoder: Decoder {
    let value: JSONValue
    let path: CodingPath
    let graph: GraphDecoder
    /// The former keys of the renamed properties of the type being decoded (``LegacyKeyed``).
    let legacyKeys: [String: [String]]?
    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: JSONValue, codingPath: CodingPath, graph: GraphDecoder, legacyKeys: [String: [String]]? = nil) {
        self.value = value
        self.path = codingPath
        self.graph = graph
        self.legacyKeys = legacyKeys
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw mismatch([String: Any].self, "a keyed container")
        }
        var lookup = MemberLookup(members)
        lookup.legacyKeys = legacyKeys
        return KeyedDecodingContainer(KeyedContainer(members: lookup, path: path, graph: graph))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw mismatch([Any].self, "an unkeyed container")
        }
        return UnkeyedContainer(elements: elements, path: path, graph: graph)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(value: value, path: path, graph: graph)
    }

    private func mismatch(_ type: Any.Type, _ what: String) -> DecodingError {
        if case .null = value {
            return .valueNotFound(type, .init(codingPath: path.keys, debugDescription: "Expected \(what) but found null."))
        }
        return .typeMismatch(type, .init(codingPath: path.keys, debugDescription: "Expected \(what) but found \(value.kindName)."))
    }
}

extension ReferenceDecoder {
    struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: MemberLookup
        let path: CodingPath
        let graph: GraphDecoder
        /// `path`, shared by the paths of the container's values.
        private let base: CodingPathNode?
        var codingPath: [any CodingKey] { path.keys }

        init(members: MemberLookup, path: CodingPath, graph: GraphDecoder) {
            self.members = members
            self.path = path
            self.graph = graph
            self.base = path.node
        }

        private func path(_ key: any CodingKey) -> CodingPath {
            CodingPath(node: base, appending: key)
        }

        var allKeys: [Key] {
            var seen = Set<String>()
            var keys = members.members.compactMap { member in
                seen.insert(member.key).inserted ? Key(stringValue: member.key) : nil
            }
            // A renamed member stored under a former key is there under its current one.
            for current in members.legacyKeys?.keys.sorted() ?? [] where !seen.contains(current) && members[current] != nil {
                if let key = Key(stringValue: current) { keys.append(key) }
            }
            return keys
        }

        func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

        private func value(for key: Key) throws -> JSONValue {
            guard let value = members[key.stringValue] else {
                var description = "No value associated with key \(key.stringValue)"
                if let former = members.legacyKeys?[key.stringValue], !former.isEmpty {
                    description += " (nor with its former keys \(former.joined(separator: ", ")))"
                }
                throw DecodingError.keyNotFound(key, .init(codingPath: path.keys, debugDescription: description + "."))
            }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            if case .null = try value(for: key) { return true }
            return false
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let value = members[key.stringValue] else {
                // GarageStorage writes no key for an empty array of references, and reads none as [].
                if let references = T.self as? any ReferenceArray.Type, references.holdsReferences {
                    return try graph.unbox(T.self, from: .array([]), codingPath: path(key))
                }
                // A row's status is its column's, set after decoding: JSON written without it
                // (GarageStorage's, for a model that kept it out of its coding keys) reads.
                if T.self == SyncStatus.self, path.depth == 0, key.stringValue == "syncStatus" {
                    return SyncStatus.undetermined as! T
                }
                return try graph.unbox(T.self, from: try self.value(for: key), codingPath: path(key))
            }
            return try graph.unbox(T.self, from: value, codingPath: path(key))
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let value = members[key.stringValue] else { return nil }
            if case .null = value { return nil }
            return try graph.unboxPresent(T.self, from: value, codingPath: path(key))
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try primitive(key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try primitive(key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try primitive(key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try primitive(key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try primitive(key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try primitive(key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try primitive(key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try primitive(key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try primitive(key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try primitive(key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try primitive(key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try primitive(key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try primitive(key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try primitive(key) }

        private func primitive<P: JSONPrimitive>(_ key: Key) throws -> P {
            let value = try value(for: key)
            // The path is built only when there is an error to report.
            do {
                return try P.decode(from: value, codingPath: .root)
            } catch {
                return try P.decode(from: value, codingPath: path(key))
            }
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try ReferenceDecoder(value: try value(for: key), codingPath: path(key), graph: graph)
                .container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ReferenceDecoder(value: try value(for: key), codingPath: path(key), graph: graph)
                .unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            let key = GarageCodingKey(stringValue: "super")
            return ReferenceDecoder(value: members["super"] ?? .null, codingPath: path(key), graph: graph)
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            ReferenceDecoder(value: members[key.stringValue] ?? .null, codingPath: path(key), graph: graph)
        }
    }

    struct UnkeyedContainer: UnkeyedDecodingContainer {
        let elements: [JSONValue]
        let path: CodingPath
        let graph: GraphDecoder
        private(set) var currentIndex = 0

        private let base: CodingPathNode?

        init(elements: [JSONValue], path: CodingPath, graph: GraphDecoder) {
            self.elements = elements
            self.path = path
            self.graph = graph
            self.base = path.node
        }

        var codingPath: [any CodingKey] { path.keys }
        var count: Int? { elements.count }
        var isAtEnd: Bool { currentIndex >= elements.count }

        private var currentPath: CodingPath {
            CodingPath(node: base, appending: GarageCodingKey(intValue: currentIndex))
        }

        private func current<T>(_ type: T.Type) throws -> JSONValue {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(type, .init(
                    codingPath: currentPath.keys, debugDescription: "Unkeyed container is at end."))
            }
            return elements[currentIndex]
        }

        mutating func decodeNil() throws -> Bool {
            if case .null = try current(Never?.self) {
                currentIndex += 1
                return true
            }
            return false
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let value = try current(T.self)
            let decoded: T
            if let primitive = T.self as? any JSONPrimitive.Type {
                // The path is built only when there is an error to report.
                do {
                    decoded = try decodePrimitive(primitive, value)
                } catch {
                    decoded = try graph.unbox(T.self, from: value, codingPath: currentPath)
                }
            } else {
                decoded = try graph.unbox(T.self, from: value, codingPath: currentPath)
            }
            currentIndex += 1
            return decoded
        }

        private func decodePrimitive<T, P: JSONPrimitive>(_ type: P.Type, _ value: JSONValue) throws -> T {
            try P.decode(from: value, codingPath: .root) as! T
        }

        mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
            guard !isAtEnd else { return nil }
            let element = elements[currentIndex]
            let value: T? = if case .null = element {
                nil
            } else {
                try graph.unboxPresent(T.self, from: element, codingPath: currentPath)
            }
            currentIndex += 1
            return value
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            let container = try ReferenceDecoder(value: try current(type), codingPath: currentPath, graph: graph)
                .container(keyedBy: type)
            currentIndex += 1
            return container
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let container = try ReferenceDecoder(value: try current([Any].self), codingPath: currentPath, graph: graph)
                .unkeyedContainer()
            currentIndex += 1
            return container
        }

        mutating func superDecoder() throws -> any Decoder {
            let decoder = ReferenceDecoder(value: try current(Any.self), codingPath: currentPath, graph: graph)
            currentIndex += 1
            return decoder
        }
    }

    struct SingleValueContainer: SingleValueDecodingContainer {
        let value: JSONValue
        let path: CodingPath
        let graph: GraphDecoder
        var codingPath: [any CodingKey] { path.keys }

        func decodeNil() -> Bool {
            if case .null = value { return true }
            return false
        }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try graph.unbox(T.self, from: value, codingPath: path)
        }
    }
}
