import Foundation
import GarageLite

/// One line of `garage export` and `garage import`: an object as its record holds it.
///
/// `type`, `identifier` and `data` (the object's JSON, as text) are required; the others take
/// a new object's values when absent, so that a line can be written by hand. Dates are
/// seconds since 1970 (exact, unlike a formatted date).
struct ExportLine: Codable {
    var type: String
    var identifier: String
    var data: String
    var status: String?
    var creationDate: Double?
    var modificationDate: Double?
    var revision: Int64?
    var isRoot: Bool?
    var references: [[String]]?
    var isDeleted: Bool?
    /// `data` is ciphertext the tool couldn't decrypt (a `DataEncryptionDelegate`'s), written back as it is.
    var isEncrypted: Bool?
    var isRemote: Bool?
    var attempts: Int?
    var lastError: String?
    var retryDate: Double?

    init(_ record: ObjectRecord) {
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

    /// The record the line describes; a reason when it describes none.
    func record(now: Date) throws -> ObjectRecord {
        var record = ObjectRecord(key: ObjectKey(typeName: type, identifier: identifier), json: data, date: now)
        if let status {
            guard let syncStatus = SyncStatus(name: status) else {
                throw Failure(.refusedInput, "unknown status '\(status)' (undetermined, notSynced, syncing or synced)")
            }
            record.syncStatus = syncStatus
        }
        if let creationDate { record.creationDate = Date(timeIntervalSince1970: creationDate) }
        record.modificationDate = modificationDate.map(Date.init(timeIntervalSince1970:)) ?? record.creationDate
        if let revision { record.revision = revision }
        if let isRoot { record.isRoot = isRoot }
        record.references = try (references ?? []).map { pair in
            guard pair.count == 2 else { throw Failure(.refusedInput, "a reference is not a [type, identifier] pair") }
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
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The line's JSON, written by `encoder` (``encoder()``).
    func text(_ encoder: JSONEncoder) throws -> String {
        String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
