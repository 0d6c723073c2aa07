import Foundation

// The containers `StreamEncoder` hands out: each holds the encoder and the serial of the frame
// (or value) it writes, and gives up when that frame was left (see `StreamEncoder`).
extension StreamEncoder {
    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: StreamEncoder
        let index: Int
        let serial: UInt32
        var codingPath: [any CodingKey] { encoder.path(ofFrame: index).keys }

        private func path(_ key: Key) -> CodingPath {
            encoder.path(ofFrame: index).appending(key)
        }

        private func begin(_ key: Key) throws {
            try encoder.beginMember(index, serial, key: key.stringValue)
        }

        mutating func encodeNil(forKey key: Key) throws {
            try begin(key)
            encoder.write(JSONWriter.nullBytes)
        }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            try begin(key)
            encoder.write(value ? JSONWriter.trueBytes : JSONWriter.falseBytes)
        }
        mutating func encode(_ value: String, forKey key: Key) throws {
            try begin(key)
            encoder.write(value)
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            try begin(key)
            try encoder.write(value, at: path(key))
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            try begin(key)
            try encoder.write(value, at: path(key))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws { try number(value, key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try number(value, key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try number(value, key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try number(value, key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            // The row's revision column is the truth (see `Revisioned`), as for `syncStatus`.
            try number(isRowRevision(key) ? 0 : value, key)
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try number(value, key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try number(value, key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try number(value, key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try number(value, key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try number(value, key) }

        private func number<N: JSONInteger>(_ value: N, _ key: Key) throws {
            try begin(key)
            _ = value.writeJSON(into: &encoder.state.pointee.bytes)
        }

        /// Whether `key` is a `Revisioned` row object's own `revision` property.
        private func isRowRevision(_ key: Key) -> Bool {
            index == 0 && encoder.row.storesRevisionInRow && key.stringValue == "revision"
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if T.self == SyncStatus.self, index == 0, encoder.row.storesSyncStatusInRow, key.stringValue == "syncStatus" {
                // The row's status column is the truth (see `ReferenceEncoder`).
                try begin(key)
                JSONWriter.writeInteger(Int64(SyncStatus.undetermined.rawValue), into: &encoder.state.pointee.bytes)
                return
            }
            if T.self == Int64.self, isRowRevision(key) {
                return try number(Int64(0), key)
            }
            try encoder.member {
                if try encoder.row.isOmitted(value) { return }
                try begin(key)
                try encoder.encodeValue(value, depth: index + 1, pathKey: .key(key))
            }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            do {
                try begin(key)
            } catch {
                return encoder.gaveUpEncoder().container(keyedBy: keyType)
            }
            return encoder.nestedKeyed(keyType, pathKey: .key(key), in: index)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            do {
                try begin(key)
            } catch {
                return encoder.gaveUpEncoder().unkeyedContainer()
            }
            return encoder.nestedUnkeyed(pathKey: .key(key), in: index)
        }

        // An encoder for later: the stream can't keep a place for it.
        mutating func superEncoder() -> any Encoder { encoder.gaveUpEncoder() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { encoder.gaveUpEncoder() }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: StreamEncoder
        let index: Int
        let serial: UInt32
        var codingPath: [any CodingKey] { encoder.path(ofFrame: index).keys }
        var count: Int { encoder.count(index, serial) }

        private func begin() throws -> Int {
            try encoder.beginElement(index, serial)
        }

        private func path(_ position: Int) -> CodingPath {
            encoder.path(ofFrame: index).appending(index: position)
        }

        mutating func encodeNil() throws {
            _ = try begin()
            encoder.write(JSONWriter.nullBytes)
        }
        mutating func encode(_ value: Bool) throws {
            _ = try begin()
            encoder.write(value ? JSONWriter.trueBytes : JSONWriter.falseBytes)
        }
        mutating func encode(_ value: String) throws {
            _ = try begin()
            encoder.write(value)
        }
        mutating func encode(_ value: Double) throws {
            let position = try begin()
            try encoder.write(value, at: path(position))
        }
        mutating func encode(_ value: Float) throws {
            let position = try begin()
            try encoder.write(value, at: path(position))
        }
        mutating func encode(_ value: Int) throws { try number(value) }
        mutating func encode(_ value: Int8) throws { try number(value) }
        mutating func encode(_ value: Int16) throws { try number(value) }
        mutating func encode(_ value: Int32) throws { try number(value) }
        mutating func encode(_ value: Int64) throws { try number(value) }
        mutating func encode(_ value: UInt) throws { try number(value) }
        mutating func encode(_ value: UInt8) throws { try number(value) }
        mutating func encode(_ value: UInt16) throws { try number(value) }
        mutating func encode(_ value: UInt32) throws { try number(value) }
        mutating func encode(_ value: UInt64) throws { try number(value) }

        private func number<N: JSONInteger>(_ value: N) throws {
            _ = try begin()
            _ = value.writeJSON(into: &encoder.state.pointee.bytes)
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try encoder.member {
                if try encoder.row.isOmitted(value) { return }
                let position = try begin()
                try encoder.encodeValue(value, depth: index + 1, pathKey: .index(position))
            }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            guard let position = try? begin() else { return encoder.gaveUpEncoder().container(keyedBy: keyType) }
            return encoder.nestedKeyed(keyType, pathKey: .index(position), in: index)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            guard let position = try? begin() else { return encoder.gaveUpEncoder().unkeyedContainer() }
            return encoder.nestedUnkeyed(pathKey: .index(position), in: index)
        }

        mutating func superEncoder() -> any Encoder { encoder.gaveUpEncoder() }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: StreamEncoder
        /// The value this container writes.
        let serial: UInt32
        var codingPath: [any CodingKey] { encoder.codingPath }

        private func begin() throws -> Value {
            try encoder.beginSingleValue(serial)
        }

        private func path(_ value: Value) -> CodingPath {
            encoder.path(framesBelow: value.depth, then: value.pathKey)
        }

        mutating func encodeNil() throws {
            _ = try begin()
            encoder.write(JSONWriter.nullBytes)
        }
        mutating func encode(_ value: Bool) throws {
            _ = try begin()
            encoder.write(value ? JSONWriter.trueBytes : JSONWriter.falseBytes)
        }
        mutating func encode(_ value: String) throws {
            _ = try begin()
            encoder.write(value)
        }
        mutating func encode(_ value: Double) throws {
            let slot = try begin()
            try encoder.write(value, at: path(slot))
        }
        mutating func encode(_ value: Float) throws {
            let slot = try begin()
            try encoder.write(value, at: path(slot))
        }
        mutating func encode(_ value: Int) throws { try number(value) }
        mutating func encode(_ value: Int8) throws { try number(value) }
        mutating func encode(_ value: Int16) throws { try number(value) }
        mutating func encode(_ value: Int32) throws { try number(value) }
        mutating func encode(_ value: Int64) throws { try number(value) }
        mutating func encode(_ value: UInt) throws { try number(value) }
        mutating func encode(_ value: UInt8) throws { try number(value) }
        mutating func encode(_ value: UInt16) throws { try number(value) }
        mutating func encode(_ value: UInt32) throws { try number(value) }
        mutating func encode(_ value: UInt64) throws { try number(value) }

        private func number<N: JSONInteger>(_ value: N) throws {
            _ = try begin()
            _ = value.writeJSON(into: &encoder.state.pointee.bytes)
        }

        mutating func encode<T: Encodable>(_ value: T) throws {
            try encoder.member {
                let slot = try begin()
                // An optional's value, usually: left out, it is `nil`.
                if try encoder.row.isOmitted(value) {
                    encoder.write(JSONWriter.nullBytes)
                    return
                }
                try encoder.encodeValue(value, depth: slot.depth, pathKey: slot.pathKey)
            }
        }
    }
}
