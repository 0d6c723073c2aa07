// The work behind the entry points of Garage+Records.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// `key` with its identifier composed as a park composes it, when that changes it.
    static func composed(_ key: ObjectKey) throws -> ObjectKey? {
        let identifier = try Identity.string(fromID: key.identifier)
        return identifier == key.identifier && Array(identifier.utf8) == Array(key.identifier.utf8)
            ? nil : ObjectKey(typeName: key.typeName, identifier: identifier)
    }

    func migratingByName(_ oldName: String, _ newName: String) throws -> (String, ChangeSet, @Sendable (StoreView) throws -> Int) {
        for name in [oldName, newName] { try Self.checkName(name, identifier: "", what: "type name") }
        return migrating(from: oldName, toTypeName: newName)
    }

    /// The records of `rows`, decrypted.
    static func records(_ rows: [StoredRow], _ encryption: EncryptionStage) throws -> [ObjectRecord] {
        try rows.map { row in
            let key = row.key
            var json = row.data
            // Without a delegate, the ciphertext as it is (``ObjectRecord/isEncrypted``).
            let decrypts = row.isEncrypted && !row.data.isEmpty && encryption.delegate != nil
            if decrypts {
                json = String(decoding: try encryption.decrypt(row.data, sealedFor: key, naming: key), as: UTF8.self)
            }
            let references: [ObjectKey]
            do {
                references = try ReferenceList.decode(row.references)
            } catch {
                throw GarageError.corruptData(typeName: key.typeName, identifier: key.identifier,
                                              reason: "its reference list is unusable: \(error)")
            }
            var record = ObjectRecord(key: key, json: json, syncStatus: row.syncStatus, date: row.creationDate)
            record.isEncrypted = row.isEncrypted && !decrypts
            record.modificationDate = row.modificationDate
            record.revision = row.revision
            record.isRoot = row.isRoot
            record.references = references
            record.isDeleted = row.isDeleted
            record.isRemote = row.isRemote
            record.claimDate = row.claimedAt
            record.attempts = Int(row.attempts)
            record.lastError = row.lastError
            record.retryDate = row.retryAt
            return record
        }
    }

    /// The rows of `records`, checked and encrypted as the garage encrypts.
    func preparingRecords(_ records: [ObjectRecord]) throws -> [StoredRow] {
        let encryption = configuration().encryption
        let encrypts = encryption.delegate != nil && !encryption.writesPlaintext
        var seen = Set<ObjectKey>()
        return try records.map { record in
            // Identifiers composed as a park composes them (NFC), so that an imported object
            // is the one a typed call finds, and the one a park of an equal identifier replaces.
            let key = ObjectKey(typeName: record.typeName, identifier: try Identity.string(fromID: record.identifier))
            func refuse(_ reason: String) -> GarageError {
                GarageError.corruptData(typeName: key.typeName, identifier: key.identifier, reason: reason)
            }
            try Self.checkName(key.typeName, identifier: key.identifier, what: "type name")
            try Self.checkName(key.identifier, identifier: key.identifier, typeName: key.typeName, what: "identifier")
            guard seen.insert(key).inserted else { throw refuse("it is imported twice") }
            guard record.revision >= 1 else { throw refuse("its revision is \(record.revision); a revision starts at 1") }
            let references = try record.references.map { reference in
                try Self.checkName(reference.typeName, identifier: reference.identifier, what: "type name")
                try Self.checkName(reference.identifier, identifier: reference.identifier, typeName: reference.typeName,
                                   what: "identifier")
                return ObjectKey(typeName: reference.typeName, identifier: try Identity.string(fromID: reference.identifier))
            }
            if record.isDeleted && record.json.isEmpty {
                // A tombstone without the content it deleted (one written before they kept it).
            } else if record.isEncrypted {
                guard !record.json.isEmpty, !record.json.containsNUL else {
                    throw refuse("its ciphertext is empty or contains U+0000 (NUL)")
                }
            } else {
                do {
                    guard case .object = try JSONReader.parse(record.json) else { throw refuse("its JSON is not an object") }
                    if let path = JSONWriter.pathOfNUL(in: Array(record.json.utf8)) {
                        throw refuse("the string at \(JSONWriter.describe(path)) holds the character U+0000 (NUL), which no engine stores as it is")
                    }
                } catch let failure as JSONReader.Failure {
                    throw refuse("its JSON is invalid: \(failure)")
                }
            }
            let sealing = encrypts && !record.json.isEmpty && !record.isEncrypted
            let data = sealing ? try encryption.encrypt(record.json, for: key) : record.json
            return StoredRow(
                key: key, data: data, isEncrypted: sealing || record.isEncrypted,
                syncStatus: record.syncStatus == .syncing ? .notSynced : record.syncStatus,
                creationDate: record.creationDate, modificationDate: record.modificationDate, revision: record.revision,
                isRoot: record.isRoot, references: ReferenceList.encode(references), isDeleted: record.isDeleted,
                attempts: Int64(record.attempts), lastError: record.lastError, retryAt: record.retryDate,
                isRemote: record.isRemote || record.isDeleted)
        }
    }

    /// Throws ``GarageError/invalidIdentifier(typeName:identifier:reason:)`` for an empty
    /// `name`, or one containing U+0000, which the store would cut short.
    static func checkName(_ name: String, identifier: String, typeName: String? = nil, what: String) throws {
        let reason = name.isEmpty ? "its \(what) is empty" : name.containsNUL ? "its \(what) contains U+0000 (NUL)" : nil
        if let reason {
            throw GarageError.invalidIdentifier(typeName: typeName ?? name, identifier: identifier, reason: reason)
        }
    }

    static func importReport(_ rows: [StoredRow], written: Set<ObjectKey>) -> RecordImportReport {
        var report = RecordImportReport(imported: [:], alreadyInGarage: [:])
        for row in rows {
            if written.contains(row.key) {
                report.imported[row.key.typeName, default: 0] += 1
            } else {
                report.alreadyInGarage[row.key.typeName, default: 0] += 1
            }
        }
        return report
    }

    func statistics(_ read: (formatVersion: Int, types: [TypeStatistics], size: (store: Int, log: Int)?),
                            isEncrypted: Bool) -> StoreStatistics {
        func size(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
        }
        return StoreStatistics(path: path, formatVersion: read.formatVersion,
                               fileSize: read.size?.store ?? path.map(size) ?? 0,
                               logSize: read.size?.log ?? path.map { size($0 + "-wal") } ?? 0, isEncrypted: isEncrypted,
                               types: read.types)
    }

}
