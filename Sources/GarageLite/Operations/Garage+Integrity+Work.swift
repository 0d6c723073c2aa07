// The work behind the entry points of Garage+Integrity.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// Opens a row with the garage's delegate, for ``check(maximumProblems:)-3x71a``; `nil`
    /// without a delegate (the JSON check reads unencrypted rows).
    func decryptionCheck() -> (@Sendable (StoredRow) throws -> Void)? {
        let encryption = configuration().encryption
        guard let delegate = encryption.delegate else { return nil }
        // An unencrypted row's JSON is checked by the JSON check, unless the delegate refuses it.
        let refusesUnencrypted = delegate is any RowBoundEncryptionDelegate
        return { row in
            if row.isEncrypted || refusesUnencrypted { _ = try encryption.open(row) }
        }
    }

}
