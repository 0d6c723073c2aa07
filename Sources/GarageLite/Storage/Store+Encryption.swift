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
            // The plaintext replaced must not stay in the pages' free space, nor in the log.
            try statements.setErasesFreedContent(true)
            defer { try? statements.setErasesFreedContent(false) }
            let (count, next) = try statements.transaction {
                let rows = try statements.unencryptedRows(after: position, limit: limit)
                var count = 0
                for row in rows where try statements.encryptData(of: row.key, previous: row.data, with: encrypt(row.data, row.key)) {
                    count += 1
                }
                return (count, rows.count < limit ? nil : rows.last?.position)
            }
            if next == nil {
                // The deleted plaintext of earlier days, in free pages, and the log's old pages.
                // (A reader of another process keeping an old snapshot keeps the log from being
                // emptied: the next call empties it.)
                _ = try statements.compactAndTruncateLog()
            }
            return (count, next)
        })
    }
}
