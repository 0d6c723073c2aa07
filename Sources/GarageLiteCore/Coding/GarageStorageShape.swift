import Foundation

/// The JSON shapes GarageStorage's Objective-C side (`MappableObject`) wrote, which its
/// decoders read, and so GarageLite's decoder reads too, wherever they are, in a store
/// imported from GarageStorage (``Garage/importGarageStorageStore(at:)-1ia5l``):
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
package enum GarageStorageShape {
    package static let identifierKey = "gs_identifier"
    package static let anonymousDataKey = "kGSAnonymousDataKey"
    package static let transformableDataKey = "gs_transformableData"
    package static let syncStatusKey = "gs_syncStatus"

    /// The identifier of a reference in Objective-C form, or `nil`.
    package static func referenceIdentifier<Value: JSONShape>(_ value: Value) -> String? {
        guard value.memberCount != nil, anonymousObjectText(value) == nil else { return nil }
        return value.member(identifierKey)?.stringValue
    }

    /// The text of a nested object stored anonymously, or `nil`.
    package static func anonymousObjectText<Value: JSONShape>(_ value: Value) -> String? {
        guard let count = value.memberCount, count <= 4 else { return nil }
        return value.member(anonymousDataKey)?.stringValue
    }

    /// The sync status stored beside a nested object stored anonymously, or `nil`.
    package static func anonymousSyncStatus<Value: JSONShape>(_ value: Value) -> SyncStatus? {
        guard let text = value.member(syncStatusKey)?.numberText, let raw = Int(text) else { return nil }
        return SyncStatus(rawValue: raw)
    }

    /// The text of a date in transformable form, or `nil`.
    package static func transformableDateText<Value: JSONShape>(_ value: Value) -> String? {
        value.member(transformableDataKey)?.stringValue
    }
}

/// What ``GarageStorageShape`` reads of a value, a tree's (``JSONValue``, when importing) or
/// a document's (``JSONNode``, when decoding).
package protocol JSONShape {
    /// An object's number of members; `nil` for anything else.
    var memberCount: Int? { get }
    /// An object's member named `key`; `nil` when it has none or is not an object.
    func member(_ key: String) -> Self?
    /// A string's value.
    var stringValue: String? { get }
    /// A number's text.
    var numberText: String? { get }
}

extension JSONValue: JSONShape {
    package var memberCount: Int? {
        guard case .object(let members) = self else { return nil }
        return members.count
    }

    package func member(_ key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    package var stringValue: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    package var numberText: String? {
        guard case .number(let text) = self else { return nil }
        return text
    }
}

extension JSONNode: JSONShape {
    package var memberCount: Int? { kind == .object ? count : nil }
}

/// A property wrapper whose value GarageStorage's Objective-C side may have stored as an
/// anonymous nested object (``Migratable``): the graph decoder decodes the value inside, with
/// the sync status stored beside it, and wraps it.
package protocol AnonymousObjectWrapper {
    /// The wrapper of the value `json` holds (the anonymous object's decrypted text), given the
    /// status `syncStatus` stored beside it.
    static func unwrappingAnonymous(_ json: JSONNode, syncStatus: SyncStatus?, codingPath: CodingPath,
                                    in graph: GraphDecoder) throws -> Self
}

extension Migratable: AnonymousObjectWrapper {
    /// The wrapped value decoded from the anonymous object, with the status stored beside it
    /// when the value is ``Syncable`` (as GarageStorage's `Migratable` set it).
    package static func unwrappingAnonymous(_ json: JSONNode, syncStatus: SyncStatus?, codingPath: CodingPath,
                                    in graph: GraphDecoder) throws -> Migratable {
        Migratable(wrappedValue: try graph.unboxAnonymousContent(Value.self, from: json, syncStatus: syncStatus,
                                                                 codingPath: codingPath))
    }
}
