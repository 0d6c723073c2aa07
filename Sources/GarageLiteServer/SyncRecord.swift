import Foundation
import GarageLite

/// An object of a type the server has no Swift type for: a JSON object, as the devices upload
/// it and as the store keeps it (one row, nested objects inline). `garage-server` serves a
/// store's types as records; an app serves one with ``SyncServer/serveRecords(ofType:rules:)``.
///
/// ```swift
/// try server.serveRecords(ofType: "Note", rules: SyncRules(scope: { note in
///     "team:" + (note["team"]?.text ?? "")
/// }))
/// ```
public struct SyncRecord: Codable, Sendable, Hashable {
    /// The object's members.
    public var fields: [String: SyncJSON]

    /// A record of `fields`.
    public init(_ fields: [String: SyncJSON] = [:]) {
        self.fields = fields
    }

    /// The member `name`, or `nil`.
    public subscript(name: String) -> SyncJSON? {
        get { fields[name] }
        set { fields[name] = newValue }
    }

    public init(from decoder: any Decoder) throws {
        fields = try decoder.singleValueContainer().decode([String: SyncJSON].self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(fields)
    }
}

/// A JSON value, as a record or a token's claims hold it. Integers stay exact (`Int64`); other
/// numbers are `Double`s.
public enum SyncJSON: Codable, Sendable, Hashable {
    /// A string.
    case string(String)
    /// An integer that fits in `Int64`.
    case integer(Int64)
    /// Another number.
    case number(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// An array.
    case array([SyncJSON])
    /// An object.
    case object([String: SyncJSON])
    /// `null`.
    case null

    /// The value as text, for a scope or an identifier: a string as it is, an integer in
    /// decimal; `nil` for the other kinds.
    public var text: String? {
        switch self {
        case .string(let text): return text
        case .integer(let value): return String(value)
        default: return nil
        }
    }

    /// The value as a number of seconds since 1970, for a token's dates.
    var seconds: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([SyncJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: SyncJSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

/// How a served type's objects are read and written: through the app's Swift type, or as
/// records under a type name.
struct ServedObjects<Object>: Sendable {
    /// The objects under `identifiers`, read in `snapshot`; `nil` for each missing.
    var retrieveAll: @Sendable (_ snapshot: GarageSnapshot, _ identifiers: [String]) throws -> [Object?]
    /// Parks each object under its identifier, in one call.
    var parkAll: @Sendable (_ objects: [(object: Object, identifier: String)]) async throws -> Void
    var delete: @Sendable (_ identifier: String) async throws -> Void
    /// The identifier the object declares, or `nil` for none.
    var identifier: @Sendable (_ object: Object) throws -> String?
}

extension ServedObjects where Object: Codable & Identifiable & Sendable & SendableMetatype {
    static func typed(_ garage: Garage, typeName: String) -> Self {
        Self(retrieveAll: { snapshot, identifiers in try snapshot.retrieve(Object.self, typeName: typeName, identifiers: identifiers) },
             parkAll: { try await garage.parkAll($0.map(\.object)) },
             delete: { _ = try await garage.delete(Object.self, identifier: $0) },
             identifier: { try Garage.identifier(of: $0) })
    }
}

extension ServedObjects where Object == SyncRecord {
    static func records(_ garage: Garage, typeName: String) -> Self {
        let key: @Sendable (String) -> ObjectKey = { ObjectKey(typeName: typeName, identifier: $0) }
        return Self(retrieveAll: { snapshot, identifiers in
                        try snapshot.json(typeName: typeName, identifiers: identifiers).map { json in
                            try json.map { try JSONDecoder().decode(SyncRecord.self, from: Data($0.utf8)) }
                        }
                    },
                    parkAll: { records in
                        for (record, identifier) in records {
                            try await garage.parkJSON(String(decoding: try JSONEncoder().encode(record), as: UTF8.self), as: key(identifier))
                        }
                    },
                    delete: { _ = try await garage.deleteObject(key($0)) },
                    identifier: { $0["id"]?.text })
    }
}
