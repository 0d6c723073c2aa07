import Foundation

/// The `Decoder` the garage hands to `init(from:)`: it reads one JSON value and resolves
/// reference stubs through its ``GraphDecoder``.
package struct ReferenceDecoder: Decoder {
    package let value: JSONNode
    package let path: CodingPath
    package let graph: GraphDecoder
    /// The former keys of the renamed properties of the type being decoded (``LegacyKeyed``).
    package let legacyKeys: [String: [String]]?
    package var codingPath: [any CodingKey] { path.keys }
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package init(value: JSONNode, codingPath: CodingPath, graph: GraphDecoder, legacyKeys: [String: [String]]? = nil) {
        self.value = value
        self.path = codingPath
        self.graph = graph
        self.legacyKeys = legacyKeys
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard value.kind == .object else {
            throw mismatch([String: Any].self, "a keyed container")
        }
        return KeyedDecodingContainer(KeyedContainer(members: NodeMembers(value, legacyKeys: legacyKeys), path: path,
                                                     graph: graph))
    }

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard value.kind == .array else {
            throw mismatch([Any].self, "an unkeyed container")
        }
        return UnkeyedContainer(array: value, path: path, graph: graph)
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(value: value, path: path, graph: graph)
    }

    private func mismatch(_ type: Any.Type, _ what: String) -> DecodingError {
        if value.isNull {
            return .valueNotFound(type, .init(codingPath: path.keys, debugDescription: "Expected \(what) but found null."))
        }
        return .typeMismatch(type, .init(codingPath: path.keys, debugDescription: "Expected \(what) but found \(value.kindName)."))
    }
}

extension ReferenceDecoder {
    package struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        /// One reference: `Codable` copies the container, and a copy of a generic struct of
        /// several fields went field by field through its metadata (about 1,000 instructions).
        private let storage: KeyedStorage
        package var members: NodeMembers { storage.members }
        package var path: CodingPath { storage.path }
        package var graph: GraphDecoder { storage.graph }
        /// `path`, shared by the paths of the container's values.
        private var base: CodingPathNode? { storage.base }
        package var codingPath: [any CodingKey] { path.keys }

        package init(members: NodeMembers, path: CodingPath, graph: GraphDecoder) {
            storage = KeyedStorage(members: members, path: path, graph: graph)
        }

        private func path(_ key: any CodingKey) -> CodingPath {
            CodingPath(node: base, appending: key)
        }

        package var allKeys: [Key] {
            var seen = Set<String>()
            var keys = members.keys.compactMap { key in
                seen.insert(key).inserted ? Key(stringValue: key) : nil
            }
            // A renamed member stored under a former key is there under its current one.
            for current in members.legacyKeys?.keys.sorted() ?? [] where !seen.contains(current) && members[current] != nil {
                if let key = Key(stringValue: current) { keys.append(key) }
            }
            return keys
        }

        package func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

        private func value(for key: Key) throws -> JSONNode {
            guard let value = members[key.stringValue] else {
                var description = "No value associated with key \(key.stringValue)"
                if let former = members.legacyKeys?[key.stringValue], !former.isEmpty {
                    description += " (nor with its former keys \(former.joined(separator: ", ")))"
                }
                throw DecodingError.keyNotFound(key, .init(codingPath: path.keys, debugDescription: description + "."))
            }
            return value
        }

        package func decodeNil(forKey key: Key) throws -> Bool {
            try value(for: key).isNull
        }

        package func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let value = members[key.stringValue] else {
                // GarageStorage writes no key for an empty array of references, and reads none as [].
                if let references = T.self as? any ReferenceArray.Type, references.holdsReferences {
                    return try graph.unbox(T.self, from: JSONDocument.emptyArray.root, codingPath: path(key))
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

        package func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let value = members[key.stringValue], !value.isNull else { return nil }
            return try graph.unboxPresent(T.self, from: value, codingPath: path(key))
        }

        package func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try primitive(key) }
        package func decode(_ type: String.Type, forKey key: Key) throws -> String { try primitive(key) }
        package func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try primitive(key) }
        package func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try primitive(key) }
        package func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try primitive(key) }
        package func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try primitive(key) }
        package func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try primitive(key) }
        package func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try primitive(key) }
        package func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try primitive(key) }
        package func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try primitive(key) }
        package func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try primitive(key) }
        package func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try primitive(key) }
        package func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try primitive(key) }
        package func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try primitive(key) }

        // Without these, the standard library's defaults answer an optional primitive with
        // three lookups of its key (contains, decodeNil, decode), through generic code.
        package func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try presentPrimitive(key) }
        package func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try presentPrimitive(key) }

        private func presentPrimitive<P: JSONPrimitive>(_ key: Key) throws -> P? {
            guard let value = members[key.stringValue], !value.isNull else { return nil }
            return try primitive(value, key)
        }

        private func primitive<P: JSONPrimitive>(_ key: Key) throws -> P {
            try primitive(try value(for: key), key)
        }

        private func primitive<P: JSONPrimitive>(_ value: JSONNode, _ key: Key) throws -> P {
            // The path is built only when there is an error to report.
            do {
                return try P.decode(from: value, codingPath: .root)
            } catch {
                return try P.decode(from: value, codingPath: path(key))
            }
        }

        package func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try ReferenceDecoder(value: try value(for: key), codingPath: path(key), graph: graph)
                .container(keyedBy: type)
        }

        package func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ReferenceDecoder(value: try value(for: key), codingPath: path(key), graph: graph)
                .unkeyedContainer()
        }

        package func superDecoder() throws -> any Decoder {
            let key = GarageCodingKey(stringValue: "super")
            return ReferenceDecoder(value: members["super"] ?? JSONDocument.null.root, codingPath: path(key), graph: graph)
        }

        package func superDecoder(forKey key: Key) throws -> any Decoder {
            ReferenceDecoder(value: members[key.stringValue] ?? JSONDocument.null.root, codingPath: path(key), graph: graph)
        }
    }

    package struct UnkeyedContainer: UnkeyedDecodingContainer {
        package let path: CodingPath
        package let graph: GraphDecoder
        package private(set) var currentIndex = 0
        private let elementCount: Int
        /// The current element, read where it is in the document.
        private var element: JSONNode

        private let base: CodingPathNode?

        package init(array: JSONNode, path: CodingPath, graph: GraphDecoder) {
            self.elementCount = array.count ?? 0
            self.element = array.firstChild
            self.path = path
            self.graph = graph
            self.base = path.node
        }

        package var codingPath: [any CodingKey] { path.keys }
        package var count: Int? { elementCount }
        package var isAtEnd: Bool { currentIndex >= elementCount }

        private mutating func advance() {
            currentIndex += 1
            element = element.nextSibling
        }

        private var currentPath: CodingPath {
            CodingPath(node: base, appending: GarageCodingKey(intValue: currentIndex))
        }

        private func current<T>(_ type: T.Type) throws -> JSONNode {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(type, .init(
                    codingPath: currentPath.keys, debugDescription: "Unkeyed container is at end."))
            }
            return element
        }

        package mutating func decodeNil() throws -> Bool {
            if try current(Never?.self).isNull {
                advance()
                return true
            }
            return false
        }

        package mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
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
            advance()
            return decoded
        }

        private func decodePrimitive<T, P: JSONPrimitive>(_ type: P.Type, _ value: JSONNode) throws -> T {
            try P.decode(from: value, codingPath: .root) as! T
        }

        package mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
            guard !isAtEnd else { return nil }
            let value: T? = if element.isNull {
                nil
            } else {
                try graph.unboxPresent(T.self, from: element, codingPath: currentPath)
            }
            advance()
            return value
        }

        package mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            let container = try ReferenceDecoder(value: try current(type), codingPath: currentPath, graph: graph)
                .container(keyedBy: type)
            advance()
            return container
        }

        package mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let container = try ReferenceDecoder(value: try current([Any].self), codingPath: currentPath, graph: graph)
                .unkeyedContainer()
            advance()
            return container
        }

        package mutating func superDecoder() throws -> any Decoder {
            let decoder = ReferenceDecoder(value: try current(Any.self), codingPath: currentPath, graph: graph)
            advance()
            return decoder
        }
    }

    package struct SingleValueContainer: SingleValueDecodingContainer {
        package let value: JSONNode
        package let path: CodingPath
        package let graph: GraphDecoder
        package var codingPath: [any CodingKey] { path.keys }

        package func decodeNil() -> Bool {
            value.isNull
        }

        package func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try graph.unbox(T.self, from: value, codingPath: path)
        }
    }
}

/// What a ``ReferenceDecoder/KeyedContainer`` reads from.
package final class KeyedStorage {
    package let members: NodeMembers
    package let path: CodingPath
    package let graph: GraphDecoder
    package let base: CodingPathNode?

    package init(members: NodeMembers, path: CodingPath, graph: GraphDecoder) {
        self.members = members
        self.path = path
        self.graph = graph
        self.base = path.node
    }
}

/// An object's members, found by key (``JSONNode/member(_:)``, or an index built once for a
/// large object), and under their former keys (``LegacyKeyed``). With a key repeated in the
/// document, the first one is read.
package struct NodeMembers {
    package let object: JSONNode
    private let index: [String: Int]?
    /// The keys renamed members had before (see ``LegacyKeyed``), by current key: a key
    /// missing from the object is looked up under them, in order.
    package let legacyKeys: [String: [String]]?

    private static let indexThreshold = 16

    package init(_ object: JSONNode, legacyKeys: [String: [String]]?) {
        self.object = object
        self.legacyKeys = legacyKeys
        if let count = object.count, count > Self.indexThreshold {
            var index: [String: Int] = [:]
            index.reserveCapacity(count)
            for member in object.members where index[member.key.stringValue!] == nil {
                index[member.key.stringValue!] = member.value.index
            }
            self.index = index
        } else {
            self.index = nil
        }
    }

    /// The keys, in document order.
    package var keys: [String] { object.members.map { $0.key.stringValue! } }

    package subscript(key: String) -> JSONNode? {
        if let value = member(key) { return value }
        guard let legacyKeys, let former = legacyKeys[key] else { return nil }
        for key in former {
            if let value = member(key) { return value }
        }
        return nil
    }

    private func member(_ key: String) -> JSONNode? {
        if let index {
            return index[key].map { JSONNode(document: object.document, index: $0) }
        }
        return object.member(key)
    }
}
