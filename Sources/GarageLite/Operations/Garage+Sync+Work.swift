// The work behind the entry points of Garage+Sync.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    func settingStatus<T>(
        _ syncStatus: SyncStatus, of objects: [T]
    ) throws -> (String, ChangeSet, @Sendable (StoreView) throws -> Void) {
        let keys = try objects.map { try key(of: $0, for: "set the sync status of") }
        var changes = ChangeSet()
        for key in keys {
            changes.record(.setSyncStatus(syncStatus), for: key)
        }
        return ("set the sync status of \(keys.first?.description ?? "nothing")", changes, { view in
            // GarageStorage's error, which its users' code matches.
            for key in keys where try !view.exists(key) {
                throw GarageError.failedToRetrieveObject(key.typeName, key.identifier)
            }
        })
    }

    func retrievingAll<T: Decodable & SendableMetatype>(_ type: T.Type, withStatus syncStatus: SyncStatus) throws -> StoreWork<[T]> {
        let typeName = try storedTypeName(T.self, listing: "retrieve all")
        let configuration = configuration()
        return reading("retrieve \(typeName) with status \(syncStatus)") { view in
            let decoder = configuration.decoder(view)
            return try view.rows(ofType: typeName, status: syncStatus)
                .map { try configuration.decode(T.self, $0.get(), with: decoder) }
        }
    }

    func listingIdentifiers<T>(_ type: T.Type, withStatus syncStatus: SyncStatus) throws -> StoreWork<[String]> {
        let typeName = try storedTypeName(T.self, listing: "list the identifiers of")
        return reading("list identifiers of \(typeName) with status \(syncStatus)") { view in
            try view.identifiers(ofType: typeName, status: syncStatus)
        }
    }

    func countingPerStatus(_ statuses: Set<SyncStatus>) -> StoreWork<[String: [SyncStatus: Int]]> {
        reading("count objects per type and status") { view in try view.statusCounts(statuses) }
    }

    func readingMetadata(_ key: ObjectKey) -> StoreWork<ObjectMetadata?> {
        reading("read the metadata of \(key)") { view in
            try view.row(key, for: .metadata).map(ObjectMetadata.init)
        }
    }

    static func required(_ metadata: ObjectMetadata?, _ key: ObjectKey) throws -> ObjectMetadata {
        guard let metadata else { throw GarageError.failedToRetrieveObject(key.typeName, key.identifier) }
        return metadata
    }

}
