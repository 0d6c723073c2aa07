/// The JSON form of a row's outgoing references: `[["Type","identifier"], ...]`.
///
/// Kept as JSON so that tools can read it with SQLite's `json_each`, without the app's types.
package enum ReferenceList {
    /// The list of a row that references nothing.
    package static let empty = "[]"

    package static func encode(_ keys: [ObjectKey]) -> String {
        if keys.isEmpty { return empty }
        return JSONWriter.string(from: .array(keys.map { .array([.string($0.typeName), .string($0.identifier)]) }))
    }

    package static func decode(_ text: String) throws -> [ObjectKey] {
        guard case .array(let pairs) = try JSONReader.parse(text) else {
            throw JSONReader.Failure(reason: "the reference list is not an array", offset: 0)
        }
        return try pairs.map { pair in
            guard case .array(let parts) = pair, parts.count == 2,
                  case .string(let type) = parts[0], case .string(let identifier) = parts[1] else {
                throw JSONReader.Failure(reason: "a reference is not a [type, identifier] pair", offset: 0)
            }
            return ObjectKey(typeName: type, identifier: identifier)
        }
    }
}
