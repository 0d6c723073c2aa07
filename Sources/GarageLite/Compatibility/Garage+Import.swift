import Foundation
import GarageLiteCore
import GarageLiteSQLite

// Importing the objects of a GarageStorage store: its file is read by `GarageStorageFile`
// (GarageLiteSQLite), its rows checked and converted by `GarageStorageImport`, and written by
// `Store.importing` (Storage/Store+Import.swift).
extension Garage {
    /// Copies every object of the GarageStorage store at `url` into this garage, in one
    /// transaction, keeping each object's type, identifier, data, sync status and dates; returns
    /// what it imported, and what it could not.
    ///
    /// ```swift
    /// let documents = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask)[0]
    /// let garage = try Garage(named: "MyGarage")
    /// garage.dataEncryptionDelegate = encryptor       // if GarageStorage had one
    /// let report = try garage.importGarageStorageStore(at: documents.appendingPathComponent("MyGarage.sqlite"))
    /// ```
    ///
    /// - The source (and its `-wal` file, where Core Data's last commits may be) is read from a
    ///   copy, and never changed: delete it yourself once you have checked the report.
    /// - It is safe to run at every launch: the store records, in the import's transaction,
    ///   the source's identity (its Core Data store UUID, which a copy or a move keeps; the
    ///   path of a file Core Data did not make) and the type and identifier of every object it
    ///   took. Importing the same source again takes none of them again, so an object deleted,
    ///   renamed (``migrateAll(fromOldClassName:to:)-73yt5``) or changed since stays as the
    ///   garage has it (``ImportReport/alreadyImported``); only the rows an earlier import
    ///   could not take are imported (a row the delegate could not decrypt, say).
    /// - An object the garage has already (parked before the first import) is left as it is
    ///   (``ImportReport/alreadyInGarage``).
    /// - Rows encrypted by a ``DataEncryptionDelegate`` stay encrypted, and read with the same
    ///   delegate. Set it before importing, so that the import checks that it decrypts them.
    /// - GarageStorage's JSON reads as it is, its Objective-C shapes included (see
    ///   <doc:MigratingFromGarageStorage>); parking an object again stores it in GarageLite's.
    /// - An imported object counts as parked directly (a root), so that garbage collection
    ///   never deletes one; without its Swift type, the objects it references are not known
    ///   exactly: every imported object one of its strings names counts, so that delete rules
    ///   err on the side of refusing. Parking it again makes them exact.
    /// - `.syncing` objects (an upload GarageStorage never finished) are imported `.notSynced`.
    ///
    /// - throws: ``GarageError/notAGarageStorageStore(path:reason:)`` when `url` is not a
    ///   GarageStorage store; ``GarageError/transactionMisuse(operation:reason:)`` in a garage
    ///   opened with a key (import into a plain store, then open it with the key); the errors of
    ///   a write. When it throws, nothing was imported.
    @discardableResult
    public func importGarageStorageStore(at url: URL) throws -> ImportReport {
        let prepared = try preparingImport(url)
        return prepared.report(try run(store.importing(prepared)), checked: dataEncryptionDelegate != nil)
    }

    /// Copies every object of the GarageStorage store at `url` into this garage (see
    /// ``importGarageStorageStore(at:)-1ia5l``), without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func importGarageStorageStore(at url: URL) async throws -> ImportReport {
        let prepared = try await Task.detached { [self] in try preparingImport(url) }.value
        return prepared.report(try await run(store.importing(prepared)), checked: dataEncryptionDelegate != nil)
    }

    private func preparingImport(_ url: URL) throws -> GarageStorageImport {
        guard url.isFileURL else {
            throw GarageError.notAGarageStorageStore(path: url.absoluteString, reason: "it is not a file URL")
        }
        if keyring != nil {
            // GarageStorage's rows would be written as they are: unencrypted, which the store refuses.
            throw GarageError.transactionMisuse(
                operation: "import a GarageStorage store into a store locked with a key",
                reason: "import it into a store opened without a key, then open that store with the key, which "
                    + "encrypts every imported object")
        }
        let delegate = dataEncryptionDelegate
        let source = try GarageStorageFile.read(at: url.path)
        return GarageStorageImport(source.rows, path: url.path, storeUUID: source.storeUUID,
                                   decrypt: delegate.map { delegate in { try delegate.decrypt($0) } }, now: Date())
    }
}

extension GarageStorageImport {
    /// The report of the import that had `outcome`; `checked` when a delegate checked the
    /// encrypted rows.
    func report(_ outcome: Outcome, checked: Bool) -> ImportReport {
        var imported: [String: Int] = [:]
        var present: [String: Int] = [:]
        var before: [String: Int] = [:]
        var encryptedWritten = 0
        for (key, row) in rows {
            if outcome.written.contains(key) {
                imported[key.typeName, default: 0] += 1
                if row.isEncrypted { encryptedWritten += 1 }
            } else if outcome.importedBefore.contains(key) {
                before[key.typeName, default: 0] += 1
            } else {
                present[key.typeName, default: 0] += 1
            }
        }
        return ImportReport(imported: imported, alreadyInGarage: present, alreadyImported: before,
                            encrypted: encryptedWritten, encryptedUnchecked: encryptedWritten > 0 && !checked,
                            failures: failures)
    }
}
