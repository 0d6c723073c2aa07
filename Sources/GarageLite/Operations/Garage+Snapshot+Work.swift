// The work behind the entry points of Garage+Snapshot.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// The work of ``retrieve(_:identifiers:)-49eiq``, for either runner.
    func retrieving<T: Decodable & SendableMetatype, ID: GarageIdentifier>(
        _ type: T.Type, _ identifiers: [ID]
    ) throws -> StoreWork<[T?]> {
        let typeName = try storedTypeName(T.self)
        let keys = try identifiers.map { ObjectKey(typeName: typeName, identifier: try Identity.string(fromID: $0)) }
        return snapshotReading("retrieve \(keys.count) \(Identity.displayName(T.self)) objects") { snapshot in
            try snapshot.retrieve(T.self, keys: keys)
        }
    }

    /// A read of one snapshot, with the garage's configuration read now (before the access).
    func snapshotReading<R>(_ operation: String, _ body: @escaping @Sendable (GarageSnapshot) throws -> R) -> StoreWork<R> {
        let configuration = configuration()
        return reading(operation) { view in try body(GarageSnapshot(view: view, configuration: configuration)) }
    }

}

extension String {
    /// Whether this JSON text holds the garage's type marker (``RegisteredTypes/typeKey``, as
    /// a JSON string) anywhere: a polymorphic value or a subclass, which only the garage reads
    /// back as stored.
    var containsTypeMarker: Bool {
        let marker = Array("\"\(RegisteredTypes.typeKey)\"".utf8)
        return utf8.withContiguousStorageIfAvailable { bytes in
            bytes.count >= marker.count && (0 ... bytes.count - marker.count).contains { bytes[$0 ..< $0 + marker.count].elementsEqual(marker) }
        } ?? contains("\"\(RegisteredTypes.typeKey)\"")
    }

}
