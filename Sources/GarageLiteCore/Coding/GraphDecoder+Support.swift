import Foundation

// What the graph decoder asks of the types it decodes (optionals, arrays of references), and
// the errors it reports.

/// An optional at any position (array element, dictionary value, property) decodes a
/// reference to a missing row as `nil`.
package protocol OptionalReference: SendableMetatype {
    static func decodeOptional(from value: JSONNode, codingPath: CodingPath, graph: GraphDecoder) throws -> Self
}

extension Optional: OptionalReference where Wrapped: Decodable {
    package static func decodeOptional(from value: JSONNode, codingPath: CodingPath, graph: GraphDecoder) throws -> Self {
        if value.isNull { return .none }
        return try graph.unboxPresent(Wrapped.self, from: value, codingPath: codingPath)
    }
}

/// An array of references: GarageStorage wrote no key for an empty one, which reads as `[]`.
package protocol ReferenceArray {
    /// Whether the elements are references (`Identifiable`, not ``InlineIdentifiable``).
    static var holdsReferences: Bool { get }
}

extension Array: ReferenceArray where Element: Identifiable {
    package static var holdsReferences: Bool { !(Element.self is any InlineIdentifiable.Type) }
}

extension DecodingError {
    /// What to do about a row whose JSON does not match its Swift type.
    package static let whatToDo = "(The stored object does not match its Swift type: park it again, or delete it; "
        + "retrieveAllLossy(_:) returns the other objects of its type.)"

    /// The same error, its description prefixed with the row it happened in, so that a
    /// failure deep in a graph, or in one row of many, names the object to look at.
    package func locating(_ key: ObjectKey) -> DecodingError {
        func located(_ context: Context) -> Context {
            var description = context.debugDescription
            // Said once, by the row the error happened in; a missing reference says it its way.
            if !description.hasSuffix(Self.whatToDo), !description.contains("Missing Identifiable reference"),
               !description.contains("garage.register(") {
                description += " " + Self.whatToDo
            }
            return Context(codingPath: context.codingPath, debugDescription: "\(key): \(description)",
                           underlyingError: context.underlyingError)
        }
        switch self {
        case let .typeMismatch(type, context): return .typeMismatch(type, located(context))
        case let .valueNotFound(type, context): return .valueNotFound(type, located(context))
        case let .keyNotFound(key, context): return .keyNotFound(key, located(context))
        case let .dataCorrupted(context): return .dataCorrupted(located(context))
        @unknown default: return self
        }
    }
}

extension Date {
    package static func mismatch(_ value: JSONNode, _ codingPath: CodingPath) -> DecodingError {
        if value.isNull {
            return .valueNotFound(Date.self, .init(codingPath: codingPath.keys, debugDescription: "Expected a date but found null."))
        }
        return .typeMismatch(Date.self, .init(
            codingPath: codingPath.keys, debugDescription: "Expected a date but found \(value.kindName)."))
    }
}
