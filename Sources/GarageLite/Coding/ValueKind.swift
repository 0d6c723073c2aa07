import Foundation

/// How the coders treat the values of one type, worked out once per type: the conformance
/// checks it takes cost more than encoding a small value, and would otherwise run for every
/// property of every object.
enum ValueKind: Sendable {
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

    static func of<T>(_ type: T.Type) -> ValueKind {
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
struct TypeInfo: Sendable {
    var kind: ValueKind
    /// A class: an instance of a subclass, where the class is declared, is written with its
    /// type name (see ``RegisteredTypes``).
    var isClass: Bool
    /// The keys the type's properties had before they were renamed (``LegacyKeyed``), by
    /// current key; `nil` for most types.
    var legacyKeys: [String: [String]]?
    /// An array, set or dictionary of references: one to a row that is gone is left out
    /// (see ``ReferenceCollection``).
    var dropsMissingReferences = false

    static func of<T>(_ type: T.Type) -> TypeInfo {
        let key = ObjectIdentifier(type)
        if let info = cache.read({ $0[key] }) {
            return info
        }
        let info = TypeInfo(kind: ValueKind.classify(type), isClass: type is AnyClass,
                            legacyKeys: (type as? any LegacyKeyed.Type).map { $0.legacyKeys },
                            dropsMissingReferences: (type as? any ReferenceCollection.Type)?.elementsAreReferences ?? false)
        cache.write { $0[key] = info }
        return info
    }

    private static let cache = Protected<[ObjectIdentifier: TypeInfo]>([:])
}
