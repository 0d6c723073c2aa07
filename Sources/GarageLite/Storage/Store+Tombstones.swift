import Foundation
import GarageLiteCore

// The tombstones the store may forget: deletions the server has, which no other row
// references any more (``RowRules/isPurgeableTombstone(_:)``).
extension Store {
    /// Deletes the `.synced` tombstones of `typeNames` (of every type when `nil`) that no claim
    /// holds and no other row references, in one transaction; returns how many went. No
    /// observer is told: the objects were deleted already.
    func purgingSyncedTombstones(ofTypes typeNames: [String]?) -> StoreWork<Int> {
        StoreWork(operation: "purge the synced tombstones", access: .write { statements in
            try Store.transaction(statements) {
                guard let typeNames else { return try statements.purgeSyncedTombstones(ofType: nil) }
                return try typeNames.reduce(0) { $0 + (try statements.purgeSyncedTombstones(ofType: $1)) }
            }
        })
    }
}
