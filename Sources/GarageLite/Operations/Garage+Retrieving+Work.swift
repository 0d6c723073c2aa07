// The work behind the entry points of Garage+Retrieving.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// An object without references is one statement; one with references is read again,
    /// with them, in one snapshot.
    /// A miss is `nil`, unless `T` is identified by its content and the identifier is an
    /// integer (a GarageStorage `hashValue`): that mistake is an error. A row under such an
    /// identifier (imported from GarageStorage, or parked with `park(_:identifier:)`) is found
    /// as any other.
    func retrieving<T: Decodable & SendableMetatype, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) throws -> StoreWork<T?> {
        let key = ObjectKey(typeName: try storedTypeName(T.self), identifier: try Identity.string(fromID: identifier))
        // The type's cached facts first: the cast of the identifier costs more, and is rarely needed.
        let refusesMiss = TypeInfo.of(T.self).identifiable == nil && Identity.isContentIdentified(T.self)
            && identifier is any FixedWidthInteger
        return retrieving(T.self, key: key, refusingMiss: refusesMiss)
    }

    func retrieving<T: Decodable & SendableMetatype>(_ type: T.Type, key: ObjectKey, refusingMiss refusesMiss: Bool = false) -> StoreWork<T?> {
        let configuration = configuration()
        return reading("retrieve \(key)", snapshot: false) { view in
            guard let row = try view.row(key) else {
                if refusesMiss {
                    throw GarageError.contentIdentifierExpected(typeName: key.typeName, identifier: key.identifier)
                }
                return nil
            }
            if view.pending == nil, row.references == ReferenceList.empty {
                return try configuration.decoder(view).decodeAlone(T.self, from: configuration.encryption.open(row))
            }
            return try view.snapshot { view in
                let decoder = configuration.decoder(view)
                return try view.row(key).map { try configuration.decode(T.self, $0, with: decoder) }
            }
        }
    }

    func retrievingAll<T: Decodable & SendableMetatype>(_ type: T.Type) throws -> StoreWork<[T]> {
        let typeName = try storedTypeName(T.self, listing: "retrieve all")
        let configuration = configuration()
        return reading("retrieve all \(typeName)") { view in
            let decoder = configuration.decoder(view)
            // Each row is decoded as it is read, and let go: the rows and the objects are not
            // all held at once.
            var objects: [T] = []
            objects.reserveCapacity(try view.count(ofType: typeName))
            try view.forEachRow(ofType: typeName) { row in
                objects.append(try configuration.decode(T.self, row.get(), with: decoder))
            }
            return objects
        }
    }

    func retrievingEach<T: Decodable & SendableMetatype>(_ type: T.Type) throws -> StoreWork<LossyRetrieval<T>> {
        let typeName = try storedTypeName(T.self, listing: "retrieve all")
        let configuration = configuration()
        return reading("retrieve all \(typeName)") { [store] view in
            let decoder = configuration.decoder(view)
            var result = LossyRetrieval<T>()
            try view.forEachRow(ofType: typeName) { read in
                do {
                    result.objects.append(try configuration.decode(T.self, read.get(), with: decoder))
                } catch where store.isRowFailure(error) {
                    result.failures.append(RetrievalFailure(
                        typeName: read.key.typeName, identifier: read.key.identifier, error: error))
                }
            }
            return result
        }
    }

    func counting<T>(_ type: T.Type, withStatus syncStatus: SyncStatus?) throws -> StoreWork<Int> {
        guard let syncStatus else { return try counting(T.self) }
        let typeName = try storedTypeName(T.self, listing: "count")
        return reading("count \(typeName) with status \(syncStatus)") { view in
            try view.count(ofType: typeName, status: syncStatus)
        }
    }

    var countingAll: StoreWork<Int> {
        reading("count every object") { view in try view.count() }
    }

    func counting<T>(_ type: T.Type) throws -> StoreWork<Int> {
        let typeName = try storedTypeName(T.self, listing: "count")
        return reading("count \(typeName)") { view in try view.count(ofType: typeName) }
    }

    func listingIdentifiers<T>(_ type: T.Type) throws -> StoreWork<[String]> {
        let typeName = try storedTypeName(T.self, listing: "list the identifiers of")
        return reading("list identifiers of \(typeName)") { view in try view.identifiers(ofType: typeName) }
    }

}
