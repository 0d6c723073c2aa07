// The work behind the entry points of Garage+QueryIndexes.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// The text index of `T` on `fields`, each holding strings or arrays of strings.
    func textIndexDefinition<T: Decodable>(_ type: T.Type, _ fields: [Field]) throws -> QueryIndexDefinition {
        let typeName = try storedTypeName(T.self)
        func refuse(_ reason: String) -> GarageError {
            GarageError.invalidQuery(typeName: typeName, query: "text index on \(fields.map(\.description).joined(separator: ", "))",
                                     reason: reason)
        }
        guard !fields.isEmpty else { throw refuse("a text index needs at least one field") }
        if configuration().dataEncryptionDelegate != nil {
            throw refuse("the garage encrypts its objects, so the store can't read their text to index it")
        }
        let shape = QueryShape.of(T.self)
        for field in fields {
            var found = QueryShape.unknown
            if let problem = shape.problem(with: field, shape: &found) { throw refuse(problem) }
            switch found {
            case .string, .array(.string), .unknown, .array(.unknown): continue
            default: throw refuse("\(field) holds \(found.kindName): a text index reads strings, and arrays of strings")
            }
        }
        return QueryIndexDefinition(typeName: typeName, fields: fields, kinds: fields.map { _ in .text })
    }

    /// The index of `T` on `fields`, each field's kind from what `T`'s JSON holds there.
    func indexDefinition<T: Decodable>(_ type: T.Type, _ fields: [Field]) throws -> QueryIndexDefinition {
        let typeName = try storedTypeName(T.self)
        let described = "index on \(fields.map(\.description).joined(separator: ", "))"
        func refuse(_ reason: String) -> GarageError {
            GarageError.invalidQuery(typeName: typeName, query: described, reason: reason)
        }
        guard !fields.isEmpty else { throw refuse("an index needs at least one field") }
        if configuration().dataEncryptionDelegate != nil {
            throw refuse("the garage encrypts its objects, so the store can't read their properties to index them")
        }
        let shape = QueryShape.of(T.self)
        let kinds: [QueryIndexDefinition.Kind] = try fields.map { field in
            if field.path.contains(where: { $0.contains("\"") }) { throw refuse("\(field): a key with a double quote can't be indexed") }
            var found = QueryShape.unknown
            if let problem = shape.problem(with: field, shape: &found) { throw refuse(problem) }
            switch found {
            case .string, .reference: return .string
            case .number: return .number
            case .bool: return .bool
            case .date:
                // Dates are indexed as the garage writes them: numbers by default.
                let sample = try DateCoding.encodeWithFoundation(Date(timeIntervalSinceReferenceDate: 0),
                                                                 strategy: configuration().dateEncodingStrategy, codingPath: [])
                if case .string = sample { return .string }
                return .number
            default: throw refuse("\(field) holds \(found.kindName): an index orders strings, numbers, booleans or dates")
            }
        }
        return QueryIndexDefinition(typeName: typeName, fields: fields, kinds: kinds)
    }

}
