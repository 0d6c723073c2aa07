import Foundation
import GarageLite

/// One line of `garage export` and `garage import`: an object as its record holds it.
///
/// `type`, `identifier` and `data` (the object's JSON, as text) are required; the others take
/// a new object's values when absent, so that a line can be written by hand. Dates are
/// seconds since 1970 (exact, unlike a formatted date).
package struct ExportLine: Codable {
    package var type: String
    package var identifier: String
    package var data: String
    package var status: String?
    package var creationDate: Double?
    package var modificationDate: Double?
    package var revision: Int64?
    package var isRoot: Bool?
    package var references: [[String]]?
    package var isDeleted: Bool?
    /// `data` is ciphertext the tool couldn't decrypt (a `DataEncryptionDelegate`'s), written back as it is.
    package var isEncrypted: Bool?
    package var isRemote: Bool?
    package var attempts: Int?
    package var lastError: String?
    package var retryDate: Double?

    package init(_ record: ObjectRecord) {
        type = record.typeName
        identifier = record.identifier
        data = record.json
        status = record.syncStatus.name
        creationDate = record.creationDate.timeIntervalSince1970
        modificationDate = record.modificationDate.timeIntervalSince1970
        revision = record.revision
        isRoot = record.isRoot
        references = record.references.map { [$0.typeName, $0.identifier] }
        isDeleted = record.isDeleted
        isEncrypted = record.isEncrypted ? true : nil
        isRemote = record.isRemote
        attempts = record.attempts
        lastError = record.lastError
        retryDate = record.retryDate?.timeIntervalSince1970
    }

    /// Why a line describes no record.
    package struct Refusal: Error, CustomStringConvertible {
        package let message: String
        init(_ message: String) { self.message = message }
        package var description: String { message }
    }

    /// The record the line describes; a ``Refusal`` when it describes none.
    package func record(now: Date) throws -> ObjectRecord {
        var record = ObjectRecord(key: ObjectKey(typeName: type, identifier: identifier), json: data, date: now)
        if let status {
            guard let syncStatus = SyncStatus(name: status) else {
                throw Refusal("unknown status '\(status)' (undetermined, notSynced, syncing or synced)")
            }
            record.syncStatus = syncStatus
        }
        if let creationDate { record.creationDate = Date(timeIntervalSince1970: creationDate) }
        record.modificationDate = modificationDate.map(Date.init(timeIntervalSince1970:)) ?? record.creationDate
        if let revision { record.revision = revision }
        if let isRoot { record.isRoot = isRoot }
        record.references = try (references ?? []).map { pair in
            guard pair.count == 2 else { throw Refusal("a reference is not a [type, identifier] pair") }
            return ObjectKey(typeName: pair[0], identifier: pair[1])
        }
        if let isDeleted { record.isDeleted = isDeleted }
        if let isEncrypted { record.isEncrypted = isEncrypted }
        if let isRemote { record.isRemote = isRemote }
        if let attempts { record.attempts = attempts }
        record.lastError = lastError
        record.retryDate = retryDate.map(Date.init(timeIntervalSince1970:))
        return record
    }

    /// An encoder that writes lines: one line each, keys sorted. Make one per export.
    package static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The line's JSON, written by `encoder` (``encoder()``).
    package func text(_ encoder: JSONEncoder) throws -> String {
        String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
