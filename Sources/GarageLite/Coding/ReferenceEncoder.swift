import Foundation

/// The `Encoder` the garage hands to `encode(to:)`: it builds JSON for one value, turning
/// every nested `Identifiable` into a reference stub through its ``RowEncoding``.
final class ReferenceEncoder: Encoder {
    let row: RowEncoding
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// What was encoded, if anything.
    private(set) var slot: EncodedSlot?
    /// Writes the slot into a parent container, for encoders handed out by `superEncoder()`.
    private let sink: ((EncodedSlot) -> Void)?

    init(row: RowEncoding, codingPath: [any CodingKey], sink: ((EncodedSlot) -> Void)? = nil) {
        self.row = row
        self.codingPath = codingPath
        self.sink = sink
    }

    fileprivate func setSlot(_ slot: EncodedSlot) {
        self.slot = slot
        sink?(slot)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let builder: ObjectBuilder
        if case .object(let existing) = slot {
            builder = existing
        } else {
            builder = ObjectBuilder()
            setSlot(.object(builder))
        }
        return KeyedEncodingContainer(KeyedContainer(encoder: self, builder: builder, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let builder: ArrayBuilder
        if case .array(let existing) = slot {
            builder = existing
        } else {
            builder = ArrayBuilder()
            setSlot(.array(builder))
        }
        return UnkeyedContainer(encoder: self, builder: builder, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }
}

extension ReferenceEncoder {
    struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ReferenceEncoder
        let builder: ObjectBuilder
        let codingPath: [any CodingKey]

        private func set(_ value: JSONValue, _ key: Key) {
            builder.members[key.stringValue] = .value(value)
        }

        mutating func encodeNil(forKey key: Key) { set(.null, key) }
        mutating func encode(_ value: Bool, forKey key: Key) { set(.bool(value), key) }
        mutating func encode(_ value: String, forKey key: Key) { set(.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            set(try value.jsonValue(codingPath: codingPath + [key]), key)
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            set(try value.jsonValue(codingPath: codingPath + [key]), key)
        }
        mutating func encode(_ value: Int, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: Int8, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: Int16, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: Int32, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: Int64, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) { set(.number(String(value)), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) { set(.number(String(value)), key) }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if T.self == SyncStatus.self, codingPath.isEmpty, key.stringValue == "syncStatus",
               encoder.row.storesSyncStatusInRow {
                // The row's status column is the truth: keeping it out of the JSON means a status
                // change neither changes the stored content nor a Hashable object's identifier.
                set(.number(String(SyncStatus.undetermined.rawValue)), key)
                return
            }
            builder.members[key.stringValue] = try encoder.row.box(value, codingPath: codingPath + [key])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            let nested = ObjectBuilder()
            builder.members[key.stringValue] = .object(nested)
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(
                encoder: encoder, builder: nested, codingPath: codingPath + [key]))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let nested = ArrayBuilder()
            builder.members[key.stringValue] = .array(nested)
            return UnkeyedContainer(encoder: encoder, builder: nested, codingPath: codingPath + [key])
        }

        mutating func superEncoder() -> any Encoder {
            superEncoder(stringKey: "super", codingKey: GarageCodingKey(stringValue: "super"))
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            superEncoder(stringKey: key.stringValue, codingKey: key)
        }

        private func superEncoder(stringKey: String, codingKey: any CodingKey) -> any Encoder {
            let builder = self.builder
            // An encoder that is handed out but not used still leaves `{}`, as JSONEncoder does.
            builder.members[stringKey] = .value(.object([:]))
            return ReferenceEncoder(row: encoder.row, codingPath: codingPath + [codingKey]) { slot in
                builder.members[stringKey] = slot
            }
        }
    }

    struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: ReferenceEncoder
        let builder: ArrayBuilder
        let codingPath: [any CodingKey]
        var count: Int { builder.elements.count }

        private var nextKey: any CodingKey { GarageCodingKey(intValue: builder.elements.count) }

        mutating func encodeNil() { builder.elements.append(.value(.null)) }
        mutating func encode(_ value: Bool) { builder.elements.append(.value(.bool(value))) }
        mutating func encode(_ value: String) { builder.elements.append(.value(.string(value))) }
        mutating func encode(_ value: Double) throws {
            builder.elements.append(.value(try value.jsonValue(codingPath: codingPath + [nextKey])))
        }
        mutating func encode(_ value: Float) throws {
            builder.elements.append(.value(try value.jsonValue(codingPath: codingPath + [nextKey])))
        }
        mutating func encode(_ value: Int) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: Int8) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: Int16) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: Int32) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: Int64) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt8) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt16) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt32) { builder.elements.append(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt64) { builder.elements.append(.value(.number(String(value)))) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            builder.elements.append(try encoder.row.box(value, codingPath: codingPath + [nextKey]))
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            let path = codingPath + [nextKey]
            let nested = ObjectBuilder()
            builder.elements.append(.object(nested))
            return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: encoder, builder: nested, codingPath: path))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let path = codingPath + [nextKey]
            let nested = ArrayBuilder()
            builder.elements.append(.array(nested))
            return UnkeyedContainer(encoder: encoder, builder: nested, codingPath: path)
        }

        mutating func superEncoder() -> any Encoder {
            let index = builder.elements.count
            let builder = self.builder
            builder.elements.append(.value(.object([:])))
            return ReferenceEncoder(row: encoder.row, codingPath: codingPath + [GarageCodingKey(intValue: index)]) { slot in
                builder.elements[index] = slot
            }
        }
    }

    struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: ReferenceEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil() { encoder.setSlot(.value(.null)) }
        mutating func encode(_ value: Bool) { encoder.setSlot(.value(.bool(value))) }
        mutating func encode(_ value: String) { encoder.setSlot(.value(.string(value))) }
        mutating func encode(_ value: Double) throws { encoder.setSlot(.value(try value.jsonValue(codingPath: codingPath))) }
        mutating func encode(_ value: Float) throws { encoder.setSlot(.value(try value.jsonValue(codingPath: codingPath))) }
        mutating func encode(_ value: Int) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: Int8) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: Int16) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: Int32) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: Int64) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt8) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt16) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt32) { encoder.setSlot(.value(.number(String(value)))) }
        mutating func encode(_ value: UInt64) { encoder.setSlot(.value(.number(String(value)))) }

        mutating func encode<T: Encodable>(_ value: T) throws {
            encoder.setSlot(try encoder.row.box(value, codingPath: codingPath))
        }
    }
}

/// A coding key for array positions, `super`, and dictionary keys.
struct GarageCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}
