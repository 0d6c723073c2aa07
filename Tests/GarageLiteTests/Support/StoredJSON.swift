import Foundation
import Testing
@testable import GarageLite

// The stored JSON of a row, read through the internal store: what the coding tests inspect.

/// The JSON text stored in the row of type `T` with `identifier`.
func codingStoredJSON<T>(_ garage: Garage, _ type: T.Type, _ identifier: String) throws -> String {
    let key = ObjectKey(typeName: try Identity.typeName(T.self), identifier: identifier)
    let row = try garage.store.storedRow(key)
    let stored = try #require(row, "no row \(key)")
    #expect(!stored.isEncrypted)
    return stored.data
}

/// The stored JSON of a row, parsed.
func codingStoredValue<T>(_ garage: Garage, _ type: T.Type, _ identifier: String) throws -> JSONValue {
    try JSONReader.parse(try codingStoredJSON(garage, type, identifier))
}

/// The string values of a coding path.
func codingKeyNames(_ path: [any CodingKey]) -> [String] {
    path.map(\.stringValue)
}
