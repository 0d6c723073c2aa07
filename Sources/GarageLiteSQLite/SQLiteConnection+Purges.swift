import Foundation
import GRDB
import GarageLiteCore

// The statements that remove rows for good: one row, and the tombstones nothing needs any more.
extension SQLiteConnection {
    package func purge(_ key: ObjectKey) throws -> Bool {
        try execute(Self.purgeSQL, [.text(key.typeName), .text(key.identifier)])
        return db.changesCount > 0
    }

    private static let purgeSQL = "DELETE FROM garage_object WHERE type = ? AND identifier = ?"

    package func purgeSyncedTombstones(ofType type: String?) throws -> Int {
        try execute(type == nil ? Self.purgeSyncedTombstonesSQL : Self.purgeSyncedTombstonesSQL + " AND type = ?",
                    type.map { [.text($0)] } ?? [])
        return db.changesCount
    }

    /// ``RowRules/isPurgeableTombstone(_:)``, and no reference from another row (as
    /// ``isReferenced(_:)``); `RowRulesTests` holds it to the rule.
    private static let purgeSyncedTombstonesSQL = """
        DELETE FROM garage_object
        WHERE syncStatus = \(SyncStatus.synced.rawValue) AND isDeleted = 1 AND claim IS NULL
            AND NOT EXISTS (SELECT 1 FROM garage_reference
                WHERE toType = garage_object.type AND toIdentifier = garage_object.identifier
                AND NOT (fromType = garage_object.type AND fromIdentifier = garage_object.identifier))
        """
}
