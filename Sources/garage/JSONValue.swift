import Foundation
import GarageLite

/// An object's JSON as a value, for `show`: printed pretty, and with references inlined.
indirect enum JSONValue: Codable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The value `text` holds; a damaged store's error, naming `key`, when it isn't JSON.
    init(text: String, naming key: ObjectKey) throws {
        do {
            self = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        } catch {
            throw GarageError.corruptData(typeName: key.typeName, identifier: key.identifier,
                                          reason: "its JSON is invalid: \(error)")
        }
    }

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
        } else if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(members)
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let bool = try? value.decode(Bool.self) {
                self = .bool(bool)
            } else if let integer = try? value.decode(Int64.self) {
                self = .integer(integer)
            } else if let number = try? value.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try value.decode(String.self))
            }
        }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var value = encoder.singleValueContainer()
            try value.encodeNil()
        case .bool(let bool):
            var value = encoder.singleValueContainer()
            try value.encode(bool)
        case .integer(let integer):
            var value = encoder.singleValueContainer()
            try value.encode(integer)
        case .number(let number):
            var value = encoder.singleValueContainer()
            try value.encode(number)
        case .string(let string):
            var value = encoder.singleValueContainer()
            try value.encode(string)
        case .array(let values):
            var array = encoder.unkeyedContainer()
            for value in values { try array.encode(value) }
        case .object(let members):
            var object = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in members { try object.encode(value, forKey: AnyKey(stringValue: key)) }
        }
    }

    /// Pretty-printed, keys sorted.
    func prettyText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// Inlines the objects an object references, as the app's decoder reads its graph.
///
/// A reference is written in the referencing object's JSON as the referenced identifier (a
/// string), or, in data from GarageStorage, as `{"gs_type": T, "gs_identifier": I}`. The row's
/// reference list says which objects are referenced: a string equal to the identifier of
/// exactly one of them is that reference.
struct Resolver {
    let garage: Garage

    func resolve(_ value: JSONValue, references: [ObjectKey], path: [ObjectKey]) throws -> JSONValue {
        var byIdentifier: [String: [ObjectKey]] = [:]
        for reference in references { byIdentifier[reference.identifier, default: []].append(reference) }
        return try inline(value, byIdentifier, path)
    }

    private func inline(_ value: JSONValue, _ byIdentifier: [String: [ObjectKey]], _ path: [ObjectKey]) throws -> JSONValue {
        switch value {
        case .string(let identifier):
            guard let keys = byIdentifier[identifier], keys.count == 1 else { return value }
            return try referenced(keys[0], path) ?? value
        case .object(let members):
            if case .string(let type)? = members["gs_type"], case .string(let identifier)? = members["gs_identifier"],
               members.count == 2, let inlined = try referenced(ObjectKey(typeName: type, identifier: identifier), path) {
                return inlined
            }
            return .object(try members.mapValues { try inline($0, byIdentifier, path) })
        case .array(let values):
            return .array(try values.map { try inline($0, byIdentifier, path) })
        default:
            return value
        }
    }

    /// The object `key` with its own references inlined; `nil` when it is on `path` already (a
    /// cycle) or missing.
    private func referenced(_ key: ObjectKey, _ path: [ObjectKey]) throws -> JSONValue? {
        guard !path.contains(key), let record = try garage.record(key), !record.isDeleted, !record.isEncrypted else { return nil }
        return try resolve(try JSONValue(text: record.json, naming: key), references: record.references, path: path + [key])
    }
}
