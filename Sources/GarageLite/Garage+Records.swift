import Foundation
import GarageLiteCore

// Records: the store's rows as they are, for tools that don't have the app's Swift types
// (the `garage` command-line tool): listing, showing, exporting and importing objects, the
// store's statistics, and renaming a type by name. The rows are read and written in
// Storage/Store+Records.swift.
extension Garage {
    /// The format version of the SQLite stores this version of GarageLite writes
    /// (``StoreStatistics/formatVersion``): a store of an older version is upgraded when a
    /// garage that can write it opens it, and one of a newer version is refused. (Each engine
    /// has its own format and migrations; SQLite is the default engine.)
    public static let formatVersion = GarageEngine.sqliteFormatVersion

    /// The largest page ``records(ofType:after:limit:)-4cy6i`` reads by default.
    public static let defaultRecordPageSize = 1_000

    /// Up to `limit` stored objects (tombstones too) as records: of the type `typeName`, or of
    /// every type, after the record `key` (from the first when `nil`), in type name then
    /// identifier order. Pass the last record's ``ObjectRecord/key`` to read the next page.
    ///
    /// ```swift
    /// var after: ObjectKey?
    /// while case let page = try garage.records(after: after), !page.isEmpty {
    ///     for record in page { print(record.key, record.syncStatus, record.json) }
    ///     after = page.last?.key
    /// }
    /// ```
    ///
    /// Records are what the store holds: the garage's unsaved changes and open transactions
    /// are not in them (save first). Each page is read from one snapshot; a page read later
    /// sees the commits made meanwhile.
    ///
    /// - throws: ``GarageError/corruptData(typeName:identifier:reason:)`` naming a row that
    ///   can't be read; the errors of decrypting an encrypted row (the garage needs its key).
    public func records(ofType typeName: String? = nil, after key: ObjectKey? = nil,
                        limit: Int = Garage.defaultRecordPageSize) throws -> [ObjectRecord] {
        let rows = try run(store.readingRecords(ofType: typeName, after: key, limit: max(1, limit)))
        return try Self.records(rows, configuration().encryption)
    }

    /// Up to `limit` stored objects as records (see ``records(ofType:after:limit:)-4cy6i``),
    /// without blocking the calling thread.
    public nonisolated(nonsending) func records(ofType typeName: String? = nil, after key: ObjectKey? = nil,
                                                limit: Int = Garage.defaultRecordPageSize) async throws -> [ObjectRecord] {
        let rows = try await run(store.readingRecords(ofType: typeName, after: key, limit: max(1, limit)))
        return try Self.records(rows, configuration().encryption)
    }

    /// The record of the object `key` (a tombstone too), or `nil` when the store has none (see
    /// ``records(ofType:after:limit:)-4cy6i``).
    ///
    /// ```swift
    /// if let record = try garage.record(ObjectKey(typeName: "Person", identifier: "sam")) {
    ///     print(record.json, record.references)
    /// }
    /// ```
    ///
    /// The identifier is looked up as it is, then composed as a park composes it (NFC): an
    /// object parked as `"caf\u{E9}"` is found as `"cafe\u{301}"` too.
    public func record(_ key: ObjectKey) throws -> ObjectRecord? {
        var row = try run(store.readingRecord(key))
        if row == nil, let composed = try Self.composed(key) { row = try run(store.readingRecord(composed)) }
        return try Self.records(row.map { [$0] } ?? [], configuration().encryption).first
    }

    /// The record of the object `key` (see ``record(_:)-1wwbh``), without blocking the calling thread.
    public nonisolated(nonsending) func record(_ key: ObjectKey) async throws -> ObjectRecord? {
        var row = try await run(store.readingRecord(key))
        if row == nil, let composed = try Self.composed(key) { row = try await run(store.readingRecord(composed)) }
        return try Self.records(row.map { [$0] } ?? [], configuration().encryption).first
    }

    /// Writes `records` into the store, in one transaction, each as it is (its JSON, status,
    /// dates, revision, references, tombstone and failed uploads; not its claim), where the
    /// store has no row with its key; returns what it wrote and what it left.
    ///
    /// ```swift
    /// let report = try backup.importRecords(try garage.records())
    /// print(report)       // "Imported 12 objects (Note: 10, Person: 2)."
    /// ```
    ///
    /// - An object the store has already (a tombstone too) is left as it is, and counted in
    ///   ``RecordImportReport/alreadyInGarage``: importing twice changes nothing.
    /// - A `.syncing` record (its claim is not imported) is written `.notSynced`, for the next
    ///   sync job to upload.
    /// - In a garage with an encryption key or delegate, the JSON is encrypted. A record that
    ///   holds ciphertext (``ObjectRecord/isEncrypted``) is written as it is.
    /// - The references are taken as they are: importing some types without those they
    ///   reference leaves references that ``check(maximumProblems:)-3x71a`` reports.
    ///
    /// - throws: Before writing anything, ``GarageError/invalidIdentifier(typeName:identifier:reason:)``
    ///   for an empty type name or identifier, or one that contains U+0000;
    ///   ``GarageError/corruptData(typeName:identifier:reason:)`` naming a record whose JSON is
    ///   not an object (or, for a tombstone, is not empty), whose revision is below 1, or that
    ///   appears twice. Then the errors of a write. When it throws, nothing was imported.
    @discardableResult
    public func importRecords(_ records: [ObjectRecord]) throws -> RecordImportReport {
        let rows = try preparingRecords(records)
        return Self.importReport(rows, written: try run(store.importingRecords(rows)))
    }

    /// Writes `records` into the store (see ``importRecords(_:)-233of``), without blocking the
    /// calling thread.
    @discardableResult
    public nonisolated(nonsending) func importRecords(_ records: [ObjectRecord]) async throws -> RecordImportReport {
        let rows = try preparingRecords(records)
        return Self.importReport(rows, written: try await run(store.importingRecords(rows)))
    }

    /// What the store holds, per type, and what its sync jobs have left to do: counts per sync
    /// status, open claims, held objects, tombstones, the oldest change not uploaded; and the
    /// store's format version, file sizes and encryption.
    ///
    /// ```swift
    /// let statistics = try garage.statistics()
    /// print(statistics.formatVersion, statistics.types.map { "\($0.typeName): \($0.count)" })
    /// ```
    ///
    /// Like records, statistics count what the store holds, without unsaved changes.
    public func statistics() throws -> StoreStatistics {
        statistics(try run(store.readingStatistics(maximumAttempts: maximumUploadAttempts)),
                   isEncrypted: try encryptionStatus().isEncrypted)
    }

    /// The store's statistics (see ``statistics()-4mask``), without blocking the calling thread.
    public nonisolated(nonsending) func statistics() async throws -> StoreStatistics {
        statistics(try await run(store.readingStatistics(maximumAttempts: maximumUploadAttempts)),
                   isEncrypted: try await encryptionStatus().isEncrypted)
    }

    /// Moves every object parked under the type name `oldName` to the type name `newName`, as
    /// ``migrateAll(fromOldClassName:to:)-73yt5`` does for a Swift type: for tools that have
    /// only names. An object of `newName` with the same identifier is replaced; references to
    /// the moved objects keep working. Returns how many moved.
    ///
    /// ```swift
    /// try garage.migrateAll(fromOldClassName: "Employee", toTypeName: "Person")
    /// ```
    ///
    /// Unlike the typed form, it can't check that no Swift type of this process is stored
    /// under `oldName`.
    ///
    /// - throws: ``GarageError/invalidIdentifier(typeName:identifier:reason:)`` for an empty
    ///   name, or one that contains U+0000.
    @discardableResult
    public func migrateAll(fromOldClassName oldName: String, toTypeName newName: String) throws -> Int {
        let (operation, changes, check) = try migratingByName(oldName, newName)
        return try record(operation, changes, check: check)
    }

    /// Moves every object of `oldName` to `newName` (see ``migrateAll(fromOldClassName:toTypeName:)-5ymqv``),
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func migrateAll(fromOldClassName oldName: String, toTypeName newName: String) async throws -> Int {
        let (operation, changes, check) = try migratingByName(oldName, newName)
        return try await record(operation, changes, check: check)
    }
}
