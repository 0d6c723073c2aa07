import Foundation

/// An array, set or dictionary whose elements are references to rows of their own
/// (`Identifiable` values that are not ``InlineIdentifiable``): decoded, it leaves out a
/// reference to an object whose deletion the store remembers (its row is a tombstone, kept
/// while the object may be on the server, and after the server has the deletion while a
/// referrer names it), as ``DeleteRule/nullify(in:)`` would have removed it.
///
/// This is what keeps a parent readable after a deletion downloaded from the server
/// (``Garage/deleteDownloaded(_:identifiers:onConflict:)-116er``) or made with
/// ``DeleteRule/rowOnly``. The stored parent is not changed; parked again, it is stored without
/// the reference. A reference to a row that is simply missing (never parked, a type not
/// migrated yet, an object that was never on the server deleted with `.rowOnly`) still fails
/// to decode: leaving it out, then parking the parent, would lose it.
package protocol ReferenceCollection {
    /// Whether the elements are references (worked out once per type, in ``TypeInfo``).
    static var elementsAreReferences: Bool { get }
    /// `value` (the collection's JSON) without the references whose row `graph` can't find.
    static func droppingMissingReferences(from value: JSONNode, in graph: GraphDecoder) throws -> JSONNode
}

extension Array: ReferenceCollection where Element: Decodable {
    package static var elementsAreReferences: Bool { ValueKind.isReference(Element.self) }

    package static func droppingMissingReferences(from value: JSONNode, in graph: GraphDecoder) throws -> JSONNode {
        guard value.kind == .array else { return value }
        let kept = try value.elements.filter { try !graph.isMissingReference(Element.self, $0) }
        return JSONDocument(.array(kept.map(\.value))).root
    }
}

extension Set: ReferenceCollection where Element: Decodable {
    package static var elementsAreReferences: Bool { ValueKind.isReference(Element.self) }

    package static func droppingMissingReferences(from value: JSONNode, in graph: GraphDecoder) throws -> JSONNode {
        guard value.kind == .array else { return value }
        let kept = try value.elements.filter { try !graph.isMissingReference(Element.self, $0) }
        return JSONDocument(.array(kept.map(\.value))).root
    }
}

extension Dictionary: ReferenceCollection where Key == String, Value: Decodable {
    package static var elementsAreReferences: Bool { ValueKind.isReference(Value.self) }

    package static func droppingMissingReferences(from value: JSONNode, in graph: GraphDecoder) throws -> JSONNode {
        guard value.kind == .object else { return value }
        let kept = try value.members.filter { try !graph.isMissingReference(Value.self, $0.value) }
        return JSONDocument(.object(kept.map { JSONMember(key: $0.key.stringValue!, value: $0.value.value) })).root
    }
}

extension ValueKind {
    /// Whether values of `type` are stored as references to rows of their own.
    package static func isReference<T>(_ type: T.Type) -> Bool {
        if case .identifiable = of(type) { return true }
        return false
    }
}

extension GraphDecoder {
    /// Whether `value`, where a `T` is expected, is a reference stub to an object whose
    /// deletion the store remembers.
    package func isMissingReference<T>(_ type: T.Type, _ value: JSONNode) throws -> Bool {
        let identifier: String
        if let string = value.stringValue {
            identifier = string
        } else if let stub = GarageStorageShape.referenceIdentifier(value) {
            identifier = stub
        } else {
            return false
        }
        let typeName = try registry.storedClass(of: T.self)?.name ?? Identity.typeName(T.self)
        let key = ObjectKey(typeName: typeName, identifier: identifier)
        if decoded[key] != nil { return false }
        guard let rememberedDeletion, try lookUpRow(key) == nil else { return false }
        return try rememberedDeletion(key) != nil
    }

    /// Whether `error` is the decoder's own "Missing Identifiable reference".
    package static func isMissingReference(_ error: DecodingError) -> Bool {
        guard case .dataCorrupted(let context) = error else { return false }
        return context.debugDescription.contains("Missing Identifiable reference: no object")
    }
}
