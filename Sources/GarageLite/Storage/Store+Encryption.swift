import Foundation

// Encrypting the rows stored unencrypted, in place (Garage+Encryption.swift).
extension Store {
    /// Encrypts, in one transaction, up to `limit` rows stored unencrypted after the row
    /// `position`, with `encrypt` (the JSON of an object, for its row); returns how many it
    /// encrypted and the position to go on from, or `nil` when no row is left.
    func encryptingUnencrypted(
        after position: Int64, limit: Int, _ encrypt: @escaping @Sendable (String, ObjectKey) throws -> String
    ) -> StoreWork<(count: Int, next: Int64?)> {
        StoreWork(operation: "encrypt the objects stored unencrypted", access: .write { statements in
            try statements.transaction {
                let rows = try statements.unencryptedRows(after: position, limit: limit)
                var count = 0
                for row in rows where try statements.encryptData(of: row.key, previous: row.data, with: encrypt(row.data, row.key)) {
                    count += 1
                }
                return (count, rows.count < limit ? nil : rows.last?.position)
            }
        })
    }
}
