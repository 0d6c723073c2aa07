import Foundation

/// What `check()` says of a row's data and reference list, for an engine that checks them in
/// Swift (PostgreSQL, whose `jsonb` refuses what the garage stores, such as `\u0000`). SQLite
/// says the same in SQL (`SQLiteConnection+Integrity.swift`), in the same words.
package enum RowChecks {
    /// Why a reference list is not a JSON array of `[type, identifier]` string pairs; `nil`
    /// when it is one.
    package static func referenceListProblem(_ list: String) -> String? {
        if list == ReferenceList.empty { return nil }
        let value: JSONValue
        do {
            value = try JSONReader.parse(list)
        } catch {
            return "it is not valid JSON"
        }
        guard case .array(let elements) = value else {
            return "it is a JSON \(sqliteTypeName(value)), not an array"
        }
        for element in elements {
            guard case .array(let pair) = element, pair.count == 2, case .string = pair[0], case .string = pair[1] else {
                return "an element is not a [\"Type\", \"identifier\"] pair of strings"
            }
        }
        return nil
    }

    /// Why unencrypted data is not JSON, with where the garage's reader stopped; `nil` when it is.
    package static func dataProblem(_ data: String) -> String? {
        do {
            _ = try JSONReader.parse(data)
            return nil
        } catch {
            return "it is not valid JSON: \(error)"
        }
    }

    /// The `[type, identifier]` pairs of a reference list that are valid, in its order: what a
    /// damaged list still says (the index of references holds those, and ``referenceListProblem(_:)``
    /// reports the damage).
    package static func validReferences(_ list: String) -> [ObjectKey] {
        if list == ReferenceList.empty { return [] }
        guard case .array(let elements)? = try? JSONReader.parse(list) else { return [] }
        return elements.compactMap { element in
            guard case .array(let pair) = element, pair.count == 2, case .string(let type) = pair[0],
                  case .string(let identifier) = pair[1] else { return nil }
            return ObjectKey(typeName: type, identifier: identifier)
        }
    }

    /// The name SQLite's `json_type` gives `value`.
    private static func sqliteTypeName(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let text): return text.contains(where: { ".eE".contains($0) }) ? "real" : "integer"
        case .string: return "text"
        case .array: return "array"
        case .object: return "object"
        }
    }
}
