import Foundation

/// How the coders treat the values of one type, worked out once per type: the conformance
/// checks it takes cost more than encoding a small value, and would otherwise run for every
/// property of every object.
package enum ValueKind: Sendable {
    case primitive(any JSONPrimitive.Type)
    case date
    case data
    case url
    case decimal
    /// An `Optional`: a reference to a missing row decodes as `nil`.
    case optional(any OptionalReference.Type)
    /// An `Identifiable` (not a row's own object): a reference stub.
    case identifiable
    /// An ``InlineIdentifiable``: encoded inline, like a value that is not `Identifiable`; a
    /// string where an object is expected may be a reference stub written before the type
    /// adopted the protocol.
    case inlineIdentifiable
    /// A set, or a dictionary encoded as `[key, value, ...]`: entries sorted when encoded.
    case unordered(valuesPerEntry: Int)
    /// An array of scalars (`[String]`, `[Int]`…): decoded element by element without
    /// `Array.init(from:)`'s container and its metadata lookups.
    case primitiveArray(any PrimitiveArray.Type)
    case other

    package static func of<T>(_ type: T.Type) -> ValueKind {
        TypeInfo.of(type).kind
    }

    fileprivate static func classify<T>(_ type: T.Type) -> ValueKind {
        if let primitive = type as? any JSONPrimitive.Type { return .primitive(primitive) }
        if type == Date.self { return .date }
        if type == Data.self { return .data }
        if type == URL.self { return .url }
        if type == Decimal.self { return .decimal }
        if let optional = type as? any OptionalReference.Type { return .optional(optional) }
        if type is any InlineIdentifiable.Type { return .inlineIdentifiable }
        if type is any Identifiable.Type { return .identifiable }
        if let unordered = type as? any UnorderedEncodable.Type {
            return .unordered(valuesPerEntry: unordered.valuesPerEntry)
        }
        if let array = type as? any PrimitiveArray.Type { return .primitiveArray(array) }
        return .other
    }
}

/// What the coders need to know about one type, worked out once per type (see ``ValueKind``).
/// A class, so that handing one out costs a retain, not a copy of each field.
package final class TypeInfo: Sendable {
    package let kind: ValueKind
    /// A class: an instance of a subclass, where the class is declared, is written with its
    /// type name (see ``RegisteredTypes``).
    package let isClass: Bool
    /// The keys the type's properties had before they were renamed (``LegacyKeyed``), by
    /// current key; `nil` for most types.
    package let legacyKeys: [String: [String]]?
    /// An array, set or dictionary of references: one to a row that is gone is left out
    /// (see ``ReferenceCollection``).
    package let dropsMissingReferences: Bool
    /// The protocols through which an object decoded from a row takes the row's facts (or is
    /// checked against them), when the type adopts them: no dynamic cast of each object.
    /// (Held as ``TypeConformance``s: a protocol's metatype is not `Sendable`.)
    package let syncable: (any SyncableConformance)?
    package let revisioned: (any RevisionedConformance)?
    package let identifiable: (any IdentifiableConformance)?

    private init<T>(_ type: T.Type) {
        kind = ValueKind.classify(type)
        isClass = type is AnyClass
        legacyKeys = (type as? any LegacyKeyed.Type).map { $0.legacyKeys }
        dropsMissingReferences = (type as? any ReferenceCollection.Type)?.elementsAreReferences ?? false
        syncable = (type as? any Syncable.Type).map { TypeConformance.syncable($0) }
        revisioned = (type as? any Revisioned.Type).map { TypeConformance.revisioned($0) }
        identifiable = (type as? any Identifiable.Type).map { TypeConformance.identifiable($0) }
    }

    /// ``Identity/declaredIdentifier(of:)``, through the conformance of `T` when it is the
    /// type that is `Identifiable`: no box, no dynamic cast.
    package static func declaredIdentifier<T>(of value: T) throws -> String? {
        if let identifiable = of(T.self).identifiable {
            return try identifiable.identifier(ofValue: value)
        }
        // A value declared as a protocol, `Any` or a superclass that is not Identifiable.
        guard type(of: value) != T.self else { return nil }
        return try Identity.declaredIdentifier(of: value)
    }

    package static func of<T>(_ type: T.Type) -> TypeInfo {
        let key = ObjectIdentifier(type)
        if let info = cache.read({ $0.find(key) }) {
            return info
        }
        let info = TypeInfo(type)
        cache.write { $0.insert(info, for: key) }
        return info
    }

    /// Looked up for most values the coders read and write: a lock and a few comparisons.
    private static let cache = Protected(Table())

    /// ``TypeInfo``s by type, with open addressing on the address of the type's metadata: a
    /// `Dictionary` hashed each key with SipHash, most of a lookup's cost.
    private struct Table {
        private var keys = [ObjectIdentifier?](repeating: nil, count: 64)
        private var infos = [TypeInfo?](repeating: nil, count: 64)
        private var count = 0

        private func slot(of key: ObjectIdentifier) -> Int {
            // Fibonacci hashing of the address; its low bits are alignment.
            let mixed = (UInt(bitPattern: key) >> 4) &* 0x9E37_79B9_7F4A_7C15
            return Int(truncatingIfNeeded: mixed >> 32) & (keys.count - 1)
        }

        func find(_ key: ObjectIdentifier) -> TypeInfo? {
            var slot = slot(of: key)
            while let candidate = keys[slot] {
                if candidate == key { return infos[slot] }
                slot = (slot + 1) & (keys.count - 1)
            }
            return nil
        }

        mutating func insert(_ info: TypeInfo, for key: ObjectIdentifier) {
            guard find(key) == nil else { return }
            if (count + 1) * 2 > keys.count {
                var larger = Table()
                larger.keys = [ObjectIdentifier?](repeating: nil, count: keys.count * 2)
                larger.infos = [TypeInfo?](repeating: nil, count: keys.count * 2)
                for (key, info) in zip(keys, infos) {
                    if let key, let info { larger.insert(info, for: key) }
                }
                self = larger
            }
            var slot = slot(of: key)
            while keys[slot] != nil { slot = (slot + 1) & (keys.count - 1) }
            keys[slot] = key
            infos[slot] = info
            count += 1
        }
    }
}

// Reading and setting a value's row facts through its type's conformance, the value known to be
// of that type (its ``TypeInfo``): without boxing it in an existential and casting it back.

/// A type's ``Syncable`` conformance, as ``TypeInfo`` holds it.
package protocol SyncableConformance: Sendable {
    func setSyncStatus<V>(_ status: SyncStatus, on value: inout V)
    func syncStatus<V>(of value: V) -> SyncStatus
}

/// A type's ``Revisioned`` conformance, as ``TypeInfo`` holds it.
package protocol RevisionedConformance: Sendable {
    func setRevision<V>(_ revision: Int64, on value: inout V)
    func revision<V>(of value: V) -> Int64
}

/// A type's `Identifiable` conformance, as ``TypeInfo`` holds it.
package protocol IdentifiableConformance: Sendable {
    func identifier<V>(ofValue value: V) throws -> String
}

/// A type's conformances as `Sendable` values: the type is a parameter of the value's type,
/// not a stored metatype.
package enum TypeConformance {
    package static func syncable<S: Syncable>(_ type: S.Type) -> any SyncableConformance { Of<S>() }
    package static func revisioned<R: Revisioned>(_ type: R.Type) -> any RevisionedConformance { Of<R>() }
    package static func identifiable<I: Identifiable>(_ type: I.Type) -> any IdentifiableConformance { Of<I>() }

    fileprivate struct Of<U>: Sendable {}
}

extension TypeConformance.Of: SyncableConformance where U: Syncable {
    func setSyncStatus<V>(_ status: SyncStatus, on value: inout V) { U.setSyncStatus(status, on: &value) }
    func syncStatus<V>(of value: V) -> SyncStatus { U.syncStatus(ofValue: value) }
}

extension TypeConformance.Of: RevisionedConformance where U: Revisioned {
    func setRevision<V>(_ revision: Int64, on value: inout V) { U.setRevision(revision, on: &value) }
    func revision<V>(of value: V) -> Int64 { U.revision(ofValue: value) }
}

extension TypeConformance.Of: IdentifiableConformance where U: Identifiable {
    func identifier<V>(ofValue value: V) throws -> String { try U.identifier(ofValue: value) }
}

extension Syncable {
    package static func setSyncStatus<V>(_ status: SyncStatus, on value: inout V) {
        precondition(V.self == Self.self, "TypeInfo found \(V.self) Syncable as \(Self.self)")
        withUnsafeMutablePointer(to: &value) { pointer in
            pointer.withMemoryRebound(to: Self.self, capacity: 1) { $0.pointee.syncStatus = status }
        }
    }
}

extension Syncable {
    package static func syncStatus<V>(ofValue value: V) -> SyncStatus {
        precondition(V.self == Self.self, "TypeInfo found \(V.self) Syncable as \(Self.self)")
        return withUnsafePointer(to: value) { pointer in
            pointer.withMemoryRebound(to: Self.self, capacity: 1) { $0.pointee.syncStatus }
        }
    }
}

extension Revisioned {
    package static func revision<V>(ofValue value: V) -> Int64 {
        precondition(V.self == Self.self, "TypeInfo found \(V.self) Revisioned as \(Self.self)")
        return withUnsafePointer(to: value) { pointer in
            pointer.withMemoryRebound(to: Self.self, capacity: 1) { $0.pointee.revision }
        }
    }

    package static func setRevision<V>(_ revision: Int64, on value: inout V) {
        precondition(V.self == Self.self, "TypeInfo found \(V.self) Revisioned as \(Self.self)")
        withUnsafeMutablePointer(to: &value) { pointer in
            pointer.withMemoryRebound(to: Self.self, capacity: 1) { $0.pointee.revision = revision }
        }
    }
}

extension Identifiable {
    package static func identifier<V>(ofValue value: V) throws -> String {
        precondition(V.self == Self.self, "TypeInfo found \(V.self) Identifiable as \(Self.self)")
        return try withUnsafePointer(to: value) { pointer in
            try pointer.withMemoryRebound(to: Self.self, capacity: 1) { try Identity.identifier(of: $0.pointee) }
        }
    }
}
