import Foundation

/// The `Encoder` the garage hands to `encode(to:)`: it builds JSON for one value, turning
/// every nested `Identifiable` into a reference stub through its ``RowEncoding``.
package final class ReferenceEncoder: Encoder {
    package let row: RowEncoding
    package let path: CodingPath
    package var codingPath: [any CodingKey] { path.keys }
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// What was encoded, if anything.
    package private(set) var slot: EncodedSlot?
    /// Writes the slot into a parent container, for encoders handed out by `superEncoder()`.
    private let sink: ((EncodedSlot) -> Void)?

    package init(row: RowEncoding, path: CodingPath, sink: ((EncodedSlot) -> Void)? = nil) {
        self.row = row
        self.path = path
        self.sink = sink
    }

    fileprivate func setSlot(_ slot: EncodedSlot) {
        self.slot = slot
        sink?(slot)
    }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let builder: ObjectBuilder
        if case .object(let existing) = slot {
            builder = existing
        } else {
            builder = ObjectBuilder()
            setSlot(.object(builder))
        }
        return KeyedEncodingContainer(KeyedContainer(row: row, builder: builder, path: path))
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let builder: ArrayBuilder
        if case .array(let existing) = slot {
            builder = existing
        } else {
            builder = ArrayBuilder()
            setSlot(.array(builder))
        }
        return UnkeyedContainer(row: row, builder: builder, path: path)
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }
}

extension ReferenceEncoder {
    package struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        package let row: RowEncoding
        package let builder: ObjectBuilder
        package let path: CodingPath
        /// `path`, shared by the paths of the container's values.
        private let base: CodingPathNode?
        package var codingPath: [any CodingKey] { path.keys }

        package init(row: RowEncoding, builder: ObjectBuilder, path: CodingPath) {
            self.row = row
            self.builder = builder
            self.path = path
            self.base = path.node
        }

        private func path(_ key: any CodingKey) -> CodingPath {
            CodingPath(node: base, appending: key)
        }

        private func set(_ value: JSONValue, _ key: Key) {
            builder.set(.value(value), for: key.stringValue)
        }

        package mutating func encodeNil(forKey key: Key) { set(.null, key) }
        package mutating func encode(_ value: Bool, forKey key: Key) { set(.bool(value), key) }
        package mutating func encode(_ value: String, forKey key: Key) { set(.string(value), key) }
        package mutating func encode(_ value: Double, forKey key: Key) throws {
            set(try value.jsonValue(codingPath: path(key)), key)
        }
        package mutating func encode(_ value: Float, forKey key: Key) throws {
            set(try value.jsonValue(codingPath: path(key)), key)
        }
        package mutating func encode(_ value: Int, forKey key: Key) { set(.number(String(value)), key) }
        package mutating func encode(_ value: Int8, forKey key: Key) { set(.number(String(value)), key) }
        package mutating func encode(_ value: Int16, forKey key: Key) { set(.number(String(value)), key) }
        package mutating func encode(_ value: Int32, forKey key: Key) { set(.number(String(value)), key) }
        package mutating func encode(_ value: Int64, forKey key: Key) {
            // The row's revision column is the truth (see `Revisioned`), as for `syncStatus`.
            set(.number(String(isRowRevision(key) ? 0 : value)), key)
        }

        /// Whether `key` is a `Revisioned` row object's own `revision` property.
        private func isRowRevision(_ key: Key) -> Bool {
            path.depth == 0 && row.storesRevisionInRow && key.stringValue == "revision"
        }
        package mutating func encode(_ value: UInt, forKey key: Key) { set(.number(String(value)), key) }
        package mutating func encode(_ value: UInt8, forKey key: Key) { set(.number(String(value)), key) }
        package mutating func encode(_ value: UInt16, forKey key: Key) { set(.number(String(value)), key) }
        package mutating func encode(_ value: UInt32, forKey key: Key) { set(.number(String(value)), key) }
        package mutating func encode(_ value: UInt64, forKey key: Key) { set(.number(String(value)), key) }

        package mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let name = key.stringValue
            if T.self == SyncStatus.self, path.depth == 0, name == "syncStatus", row.storesSyncStatusInRow {
                // The row's status column is the truth: keeping it out of the JSON means a status
                // change neither changes the stored content nor a Hashable object's identifier.
                builder.set(.value(.number(String(SyncStatus.undetermined.rawValue))), for: name)
                return
            }
            if T.self == Int64.self, isRowRevision(key) {
                builder.set(.value(.number("0")), for: name)
                return
            }
            if try row.isOmitted(value) { return }
            builder.set(try row.box(value, at: path(key)), for: name)
        }

        package mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            let nested = ObjectBuilder()
            builder.set(.object(nested), for: key.stringValue)
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(row: row, builder: nested, path: path(key)))
        }

        package mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let nested = ArrayBuilder()
            builder.set(.array(nested), for: key.stringValue)
            return UnkeyedContainer(row: row, builder: nested, path: path(key))
        }

        package mutating func superEncoder() -> any Encoder {
            superEncoder(key: GarageCodingKey(stringValue: "super"))
        }

        package mutating func superEncoder(forKey key: Key) -> any Encoder {
            superEncoder(key: key)
        }

        private func superEncoder(key: any CodingKey) -> any Encoder {
            let builder = self.builder
            let name = key.stringValue
            // An encoder that is handed out but not used still leaves `{}`, as JSONEncoder does.
            builder.set(.value(.object([])), for: name)
            return ReferenceEncoder(row: row, path: path(key)) { slot in
                builder.set(slot, for: name)
            }
        }
    }

    package struct UnkeyedContainer: UnkeyedEncodingContainer {
        package let row: RowEncoding
        package let builder: ArrayBuilder
        package let path: CodingPath
        private let base: CodingPathNode?
        package var codingPath: [any CodingKey] { path.keys }
        package var count: Int { builder.elements.count }

        package init(row: RowEncoding, builder: ArrayBuilder, path: CodingPath) {
            self.row = row
            self.builder = builder
            self.path = path
            self.base = path.node
        }

        private var nextPath: CodingPath {
            CodingPath(node: base, appending: GarageCodingKey(intValue: builder.elements.count))
        }

        private func append(_ value: JSONValue) { builder.elements.append(.value(value)) }

        package mutating func encodeNil() { append(.null) }
        package mutating func encode(_ value: Bool) { append(.bool(value)) }
        package mutating func encode(_ value: String) { append(.string(value)) }
        package mutating func encode(_ value: Double) throws { append(try value.jsonValue(codingPath: nextPath)) }
        package mutating func encode(_ value: Float) throws { append(try value.jsonValue(codingPath: nextPath)) }
        package mutating func encode(_ value: Int) { append(.number(String(value))) }
        package mutating func encode(_ value: Int8) { append(.number(String(value))) }
        package mutating func encode(_ value: Int16) { append(.number(String(value))) }
        package mutating func encode(_ value: Int32) { append(.number(String(value))) }
        package mutating func encode(_ value: Int64) { append(.number(String(value))) }
        package mutating func encode(_ value: UInt) { append(.number(String(value))) }
        package mutating func encode(_ value: UInt8) { append(.number(String(value))) }
        package mutating func encode(_ value: UInt16) { append(.number(String(value))) }
        package mutating func encode(_ value: UInt32) { append(.number(String(value))) }
        package mutating func encode(_ value: UInt64) { append(.number(String(value))) }

        package mutating func encode<T: Encodable>(_ value: T) throws {
            if try row.isOmitted(value) { return }
            builder.elements.append(try row.box(value, at: nextPath))
        }

        package mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            let nestedPath = nextPath
            let nested = ObjectBuilder()
            builder.elements.append(.object(nested))
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(row: row, builder: nested, path: nestedPath))
        }

        package mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let nestedPath = nextPath
            let nested = ArrayBuilder()
            builder.elements.append(.array(nested))
            return UnkeyedContainer(row: row, builder: nested, path: nestedPath)
        }

        package mutating func superEncoder() -> any Encoder {
            let index = builder.elements.count
            let builder = self.builder
            builder.elements.append(.value(.object([])))
            return ReferenceEncoder(row: row, path: path.appending(index: index)) { slot in
                builder.elements[index] = slot
            }
        }
    }

    package struct SingleValueContainer: SingleValueEncodingContainer {
        package let encoder: ReferenceEncoder
        package var codingPath: [any CodingKey] { encoder.codingPath }

        private func set(_ value: JSONValue) { encoder.setSlot(.value(value)) }

        package mutating func encodeNil() { set(.null) }
        package mutating func encode(_ value: Bool) { set(.bool(value)) }
        package mutating func encode(_ value: String) { set(.string(value)) }
        package mutating func encode(_ value: Double) throws { set(try value.jsonValue(codingPath: encoder.path)) }
        package mutating func encode(_ value: Float) throws { set(try value.jsonValue(codingPath: encoder.path)) }
        package mutating func encode(_ value: Int) { set(.number(String(value))) }
        package mutating func encode(_ value: Int8) { set(.number(String(value))) }
        package mutating func encode(_ value: Int16) { set(.number(String(value))) }
        package mutating func encode(_ value: Int32) { set(.number(String(value))) }
        package mutating func encode(_ value: Int64) { set(.number(String(value))) }
        package mutating func encode(_ value: UInt) { set(.number(String(value))) }
        package mutating func encode(_ value: UInt8) { set(.number(String(value))) }
        package mutating func encode(_ value: UInt16) { set(.number(String(value))) }
        package mutating func encode(_ value: UInt32) { set(.number(String(value))) }
        package mutating func encode(_ value: UInt64) { set(.number(String(value))) }

        package mutating func encode<T: Encodable>(_ value: T) throws {
            // An optional's value, usually: left out, it is `nil`.
            if try encoder.row.isOmitted(value) { return set(.null) }
            encoder.setSlot(try encoder.row.box(value, at: encoder.path))
        }
    }
}
