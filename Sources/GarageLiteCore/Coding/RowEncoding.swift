import Foundation

/// The encoding state of one row: the graph it belongs to, and the references it holds.
package final class RowEncoding {
    package unowned let graph: GraphEncoder
    /// The row's object is `Syncable`: its status lives in the row, not in its JSON.
    package let storesSyncStatusInRow: Bool
    /// The row's object is `Revisioned`: its revision lives in the row, not in its JSON.
    package let storesRevisionInRow: Bool
    package private(set) var references: [ObjectKey] = []
    private var referenceSet: Set<ObjectKey> = []

    package init(graph: GraphEncoder, storesSyncStatusInRow: Bool, storesRevisionInRow: Bool = false) {
        self.graph = graph
        self.storesSyncStatusInRow = storesSyncStatusInRow
        self.storesRevisionInRow = storesRevisionInRow
    }

    /// Encodes one value at `path`. A nested `Identifiable` becomes a reference stub, unless it
    /// is ``InlineIdentifiable``: that is encoded inline, as a value that is not identifiable.
    ///
    /// `tagged` writes the value with its type name even when it is of the type declared.
    package func box<T: Encodable>(_ value: T, at path: CodingPath, isRowObject: Bool = false, tagged: Bool = false) throws -> EncodedSlot {
        let info = TypeInfo.of(T.self)
        let kind = info.kind
        if case .primitive(let primitive) = kind {
            return .value(try primitive.jsonValue(of: value, codingPath: path))
        }
        if path.depth >= JSONReader.maximumDepth {
            throw EncodingError.invalidValue(value, .init(
                codingPath: path.keys,
                debugDescription: "The value is nested \(path.depth) levels deep; an object stores at most "
                    + "\(JSONReader.maximumDepth). Make some nested values Identifiable, so that they are parked "
                    + "as rows of their own."))
        }
        if path.depth & 7 == 0, ThreadStack.isShort {
            // A deeply nested value on a thread with a small stack (see `ThreadStack`).
            return try ThreadStack.run({ try box(value, at: path, isRowObject: isRowObject, tagged: tagged) }, context: graph.context)
        }
        if let scalar = try scalarJSON(value, kind: kind, isRowObject: isRowObject, at: path) {
            return .value(scalar)
        }
        if case .date = kind, case .custom(let encode) = graph.dateStrategy, let date = value as? Date {
            let encoder = ReferenceEncoder(row: self, path: path)
            try encode(date, encoder)
            return encoder.slot ?? .value(.object([]))
        }
        if info.isClass, tagged || type(of: value) != T.self {
            let subclass: any Encodable.Type = type(of: value)
            return try boxSubclassInstance(subclass, value, declared: T.self, at: path, isRowObject: isRowObject)
        }
        let encoder = ReferenceEncoder(row: self, path: path)
        try value.encode(to: encoder)
        if case .unordered(let valuesPerEntry) = kind, case .array(let builder)? = encoder.slot {
            return .value(.array(Self.canonicalOrder(builder.elements.map(\.jsonValue), valuesPerEntry: valuesPerEntry)))
        }
        return encoder.slot ?? .value(.object([]))
    }

    /// An instance of a subclass where its class `declared` is declared: its type name, and its
    /// value encoded as its own type, so that it reads back as what it is.
    ///
    /// - throws: ``GarageError/unregisteredType(typeName:declaredType:)`` unless the garage
    ///   knows its type (``Garage/register(_:)``).
    @inline(never)
    private func boxSubclassInstance<U: Encodable>(_ subclass: U.Type, _ instance: Any, declared: Any.Type,
                                                   at path: CodingPath, isRowObject: Bool) throws -> EncodedSlot {
        // Opening an existential gives the type it was made from, not the instance's class.
        let value = instance as! U
        let name = try Identity.typeName(U.self)
        guard graph.registry.contains(ObjectIdentifier(U.self), named: name) else {
            throw GarageError.unregisteredType(typeName: Identity.fullName(U.self), declaredType: Identity.fullName(declared))
        }
        return try tagged(name, try box(value, at: path, isRowObject: isRowObject))
    }

    /// A value with its type name: `{"@type": name, "@value": value}`.
    package func tagged(_ name: String, _ value: EncodedSlot) throws -> EncodedSlot {
        let object = ObjectBuilder()
        object.set(.value(.string(name)), for: RegisteredTypes.typeKey)
        object.set(value, for: RegisteredTypes.valueKey)
        return .object(object)
    }

    /// The entries of a set (or of a dictionary encoded as `[key, value, ...]`), sorted by
    /// their JSON: their iteration order is seeded per process, and the stored JSON and a
    /// `Hashable` object's identifier must not depend on it.
    private static func canonicalOrder(_ values: [JSONValue], valuesPerEntry: Int) -> [JSONValue] {
        guard valuesPerEntry > 0, values.count % valuesPerEntry == 0 else { return values }
        let entries = stride(from: 0, to: values.count, by: valuesPerEntry).map {
            Array(values[$0..<$0 + valuesPerEntry])
        }
        return entries
            .map { (bytes: JSONWriter.bytes(from: .array($0)), values: $0) }
            .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
            .flatMap(\.values)
    }

    /// Whether `value` is a reference the graph leaves out (see ``GraphEncoder/omits``).
    package func isOmitted<T: Encodable>(_ value: T) throws -> Bool {
        guard let omits = graph.omits, case .identifiable = ValueKind.of(T.self),
              let identifiable = value as? any Identifiable,
              omits(try graph.key(of: identifiable, as: T.self).key)
        else { return false }
        graph.noteOmitted()
        return true
    }

    /// The JSON of `value` when its kind is written without a container: a date (unless its
    /// strategy is `.custom`), data, a URL, a decimal, a nested `Identifiable` (its reference
    /// stub, which schedules its row); `nil` for every other value. One implementation for the
    /// tree (``box(_:at:isRowObject:tagged:)``) and the stream (``StreamEncoder``).
    package func scalarJSON<T: Encodable>(_ value: T, kind: ValueKind, isRowObject: Bool,
                                          at path: @autoclosure () -> CodingPath) throws -> JSONValue? {
        switch kind {
        case .date:
            if let date = value as? Date { return try dateJSON(date, at: path()) }
        case .data:
            if let data = value as? Data { return .string(data.base64EncodedString()) }
        case .url:
            if let url = value as? URL { return .string(url.absoluteString) }
        case .decimal:
            if let decimal = value as? Decimal {
                guard decimal.isFinite else {
                    throw EncodingError.invalidValue(decimal, .init(
                        codingPath: path().keys, debugDescription: "Unable to encode Decimal.nan in JSON."))
                }
                return .number(decimal.description)
            }
        case .identifiable where !isRowObject:
            if let identifiable = value as? any Identifiable {
                let (key, tagged) = try graph.key(of: identifiable, as: T.self)
                graph.reference(value, key: key, tagged: tagged)
                if referenceSet.insert(key).inserted {
                    references.append(key)
                }
                return .string(key.identifier)
            }
        default:
            break
        }
        return nil
    }

    /// A date's JSON under the graph's strategy; `nil` for `.custom`, which encodes it through
    /// an encoder.
    private func dateJSON(_ date: Date, at path: @autoclosure () -> CodingPath) throws -> JSONValue? {
        switch graph.dateStrategy {
        case .deferredToDate:
            return try Self.number(date.timeIntervalSinceReferenceDate, at: path)
        case .secondsSince1970:
            return try Self.number(date.timeIntervalSince1970, at: path)
        case .millisecondsSince1970:
            return try Self.number(date.timeIntervalSince1970 * 1000, at: path)
        case .iso8601:
            return .string(ISO8601Text.string(from: date))
        case .custom:
            return nil
        #if canImport(Darwin)
        default:
            // `.formatted` (on Linux, `.formatted` is a `.custom` closure) and future strategies.
            return try DateCoding.encodeWithFoundation(date, strategy: graph.dateStrategy, codingPath: path().keys)
        #endif
        }
    }
}

extension RowEncoding {
    /// A number's JSON; the path is made only for the error of a number JSON can't hold.
    fileprivate static func number(_ value: Double, at path: () -> CodingPath) throws -> JSONValue {
        value.isFinite ? .number(value.description) : try value.jsonValue(codingPath: path())
    }
}
