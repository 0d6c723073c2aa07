import Foundation

// The writes of ``RowWriteStatements`` that are not rules of one row (those are in
// `RowWriteStatements+Rules.swift`), built on the primitives (``RowStatements/record(_:)``,
// ``RowWriteStatements/putRow(_:)``, ``RowWriteStatements/purge(_:)``,
// ``RowWriteStatements/replaceMetadata(_:previous:with:)``): the default implementations, so that
// an engine that stores rows gets each right. An engine with a faster path implements it itself.
extension RowWriteStatements {
    package func setMetadata(_ name: String, _ value: String) throws {
        try replaceMetadata(name, previous: try metadata(name), with: value)
    }

    /// The count in the store fact `encryptions` (``RowStatements/encryptionCount()``).
    package func setEncryptionCount(_ count: Int64) throws {
        try setMetadata("encryptions", String(count))
    }

    @discardableResult package func insertImported(_ key: ObjectKey, _ row: ImportedRow) throws -> Bool {
        guard try record(key) == nil else { return false }
        var imported = StoredRow(key: key, data: row.data, isEncrypted: row.isEncrypted, syncStatus: row.syncStatus,
                                 creationDate: row.creationDate, modificationDate: row.modificationDate, revision: 1, isRoot: true,
                                 references: row.references, isRemote: row.isRemote)
        imported.referencesKnown = false
        try putRow(imported)
        return true
    }

    @discardableResult package func insertRecord(_ key: ObjectKey, _ row: StoredRow) throws -> Bool {
        guard try record(key) == nil else { return false }
        var inserted = row
        inserted.key = key
        inserted.claim = nil
        inserted.claimedAt = nil
        inserted.rowVersion = nil
        inserted.referencesKnown = true
        try putRow(inserted)
        return true
    }

    /// Each row of `from` stored under `to` (replacing the row of `to` with its identifier, but
    /// for a tombstone over a live object, which goes), then the references to them rewritten.
    package func renameType(from: String, to: String, reseal: RowResealer?) throws -> Int {
        var moved = 0
        for row in try everyRow(ofType: from) {
            let newKey = ObjectKey(typeName: to, identifier: row.key.identifier)
            var renamed = row
            renamed.key = newKey
            if let reseal, row.isEncrypted, !row.data.isEmpty {
                do {
                    renamed.data = try reseal.reseal(row.data, row.key, newKey)
                } catch {
                    throw GarageError.decryptionFailed(
                        typeName: from, identifier: row.key.identifier,
                        reason: "it can't be re-encrypted for its new type \(to), so no \(from) was moved (\(error)); "
                            + "delete it, or park it again, then move the others")
                }
                renamed.base = row.base.flatMap { try? reseal.reseal($0, row.key, newKey) }
            }
            try purge(row.key)
            if row.isDeleted, let existing = try record(newKey)?.get(), !existing.isDeleted { continue }
            try purge(newKey)
            try putRow(renamed)
            moved += 1
        }
        let needle = "\"\(from)\""
        try forEachRow(ofType: nil, tombstones: true) { row in
            guard row.references.contains(needle), let keys = try? ReferenceList.decode(row.references) else { return }
            var rewritten = row
            rewritten.references = ReferenceList.encode(keys.map {
                $0.typeName == from ? ObjectKey(typeName: to, identifier: $0.identifier) : $0
            })
            try putRow(rewritten)
        }
        return moved
    }

    /// Nothing: without indexes of its own, an engine answers queries by reading the rows.
    package func createQueryIndex(_ definition: QueryIndexDefinition) throws {}

    /// Nothing, as ``createQueryIndex(_:)``.
    package func dropQueryIndex(_ definition: QueryIndexDefinition) throws {}

    @discardableResult
    package func replaceData(of key: ObjectKey, previous: String, with data: String, base: String?, isEncrypted: Bool) throws -> Bool {
        guard var row = try record(key)?.get(), row.data == previous else { return false }
        row.data = data
        row.base = base
        row.isEncrypted = isEncrypted
        try putRow(row)
        return true
    }
}
