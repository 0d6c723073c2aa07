import Foundation

/// The JSON shapes GarageStorage's Objective-C side (`MappableObject`) wrote, which its
/// decoders read, and so GarageLite's decoder reads too, wherever they are, in a store
/// imported from GarageStorage (``Garage/importGarageStorageStore(at:)-290w2``):
///
/// - a reference: `{"gs_type": "Person", "gs_identifier": "p1"}`, read where an
///   `Identifiable` is expected, as the identifier string a Swift reference is;
/// - a date: `{"gs_type": "gs_transformableType", "gs_transformableType": "gs_transformableDate",
///   "gs_transformableData": "2019-10-01T12:00:00Z"}`, read where a `Date` is expected (with the
///   default date decoding);
/// - a nested object that is not identified: `{"gs_identifier": "kGSAnonymousObject",
///   "gs_type": "Address", "kGSAnonymousDataKey": "<its JSON, as text>"}`, with
///   `"gs_syncStatus"` when it is `Syncable`; its text is encrypted when GarageStorage had a
///   delegate. Read where any other value is expected, and by ``Migratable``.
///
/// GarageLite never writes these shapes: an object parked again is stored in its own.
enum GarageStorageShape {
    static let identifierKey = "gs_identifier"
    static let anonymousDataKey = "kGSAnonymousDataKey"
    static let transformableDataKey = "gs_transformableData"
    static let syncStatusKey = "gs_syncStatus"

    /// The identifier of a reference in Objective-C form, or `nil`.
    static func referenceIdentifier(_ value: JSONValue) -> String? {
        guard case .object(let members) = value, anonymousObjectText(value) == nil else { return nil }
        return members.first { $0.key == identifierKey }.flatMap { member in
            if case .string(let identifier) = member.value { return identifier }
            return nil
        }
    }

    /// The text of a nested object stored anonymously, or `nil`.
    static func anonymousObjectText(_ value: JSONValue) -> String? {
        guard case .object(let members) = value, members.count <= 4 else { return nil }
        return members.first { $0.key == anonymousDataKey }.flatMap { member in
            if case .string(let text) = member.value { return text }
            return nil
        }
    }

    /// The sync status stored beside a nested object stored anonymously, or `nil`.
    static func anonymousSyncStatus(_ value: JSONValue) -> SyncStatus? {
        guard case .object(let members) = value,
              let member = members.first(where: { $0.key == syncStatusKey }),
              case .number(let text) = member.value, let raw = Int(text) else { return nil }
        return SyncStatus(rawValue: raw)
    }

    /// The text of a date in transformable form, or `nil`.
    static func transformableDateText(_ value: JSONValue) -> String? {
        guard case .object(let members) = value else { return nil }
        return members.first { $0.key == transformableDataKey }.flatMap { member in
            if case .string(let text) = member.value { return text }
            return nil
        }
    }
}

/// A property wrapper whose value GarageStorage's Objective-C side may have stored as an
/// anonymous nested object (``Migratable``): the graph decoder decodes the value inside, with
/// the sync status stored beside it, and wraps it.
protocol AnonymousObjectWrapper {
    /// The wrapper of the value `json` holds (the anonymous object's decrypted text), given the
    /// status `syncStatus` stored beside it.
    static func unwrappingAnonymous(_ json: JSONValue, syncStatus: SyncStatus?, codingPath: CodingPath,
                                    in graph: GraphDecoder) throws -> Self
}

extension Migratable: AnonymousObjectWrapper {
    /// The wrapped value decoded from the anonymous object, with the status stored beside it
    /// when the value is ``Syncable`` (as GarageStorage's `Migratable` set it).
    static func unwrappingAnonymous(_ json: JSONValue, syncStatus: SyncStatus?, codingPath: CodingPath,
                                    in graph: GraphDecoder) throws -> Migratable {
        Migratable(wrappedValue: try graph.unboxAnonymousContent(Value.self, from: json, syncStatus: syncStatus,
                                                                 codingPath: codingPath))
    }
}
