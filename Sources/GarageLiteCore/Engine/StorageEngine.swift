import Foundation

/// What the garage needs from a database: connections to read from (each statement its own
/// snapshot, or several in one snapshot) and one serialized writer, with the statements of
/// ``RowStatements`` and ``RowWriteStatements``.
///
/// Each engine implements it in its own target or folder. ``Store`` is the only user:
/// it adds what does not depend on the database (the pending changes a call sees, the
/// reentrancy checks, sync and async runners). The names say what a statement does for the
/// garage, not how a database spells it, so that another database can stand behind it.
package protocol StorageEngine: Sendable {
    /// The file (or address) of the store, for errors; `nil` for a store in memory.
    var path: String? { get }

    /// Runs `body` on a connection that reads, outside any transaction, on this thread.
    func read<T>(_ operation: @autoclosure () -> String, _ body: (any RowStatements) throws -> T) throws -> T

    /// Starts `body` on a connection that reads, on another thread, and returns at once.
    func startRead(_ operation: String, _ body: @escaping @Sendable (Result<any RowStatements, any Error>) -> Void)

    /// Runs `body` with the writer, alone, on this thread: writes are serialized.
    func write<T>(_ operation: String, _ body: (any RowWriteStatements) throws -> T) throws -> T

    /// Starts `body` with the writer, alone, on another thread, and returns at once.
    func startWrite(_ operation: String, _ body: @escaping @Sendable (Result<any RowWriteStatements, any Error>) -> Void)

    /// Whether the store can only be read (every write throws).
    var isReadOnly: Bool { get }

    /// The garage's error for an error the database threw while performing `operation`;
    /// other errors unchanged.
    func garageError(_ error: any Error, operation: String) -> any Error
}

/// A row as read by a statement that reads many: the row, or why it can't be read.
///
/// Reads that skip bad rows (lossy retrieves, claims) keep going past an unreadable row;
/// the others throw its error.
package enum RowRead: Sendable {
    case row(StoredRow)
    /// A column holds a value of the wrong type, or NULL where a value belongs.
    case unreadable(ObjectKey, GarageError)

    /// The key of the row, readable or not.
    package var key: ObjectKey {
        switch self {
        case .row(let row): return row.key
        case .unreadable(let key, _): return key
        }
    }

    /// The row, or the error that names it.
    package func get() throws -> StoredRow {
        switch self {
        case .row(let row): return row
        case .unreadable(_, let error): throw error
        }
    }
}

/// The statements that read the object table, on one connection.
///
/// Every row is read by one strict reader: a column of the wrong type, or NULL where a value
/// belongs, is ``GarageError/corruptData(typeName:identifier:reason:)`` naming the object and
/// the column.
package protocol RowStatements {
    // MARK: Primitives: what an engine must implement

    /// The store fact `name` (`garage_meta`) as text, or `nil`.
    func metadata(_ name: String) throws -> String?
    /// Runs `body` in one read transaction: every statement in it reads one snapshot.
    func snapshot<T>(_ body: () throws -> T) throws -> T

    /// Up to `limit` rows, tombstones too, with every column and ``StoredRow/isRemote``: of
    /// `type` (or of every type), after the row `key` (`nil`: from the first), in key order.
    /// A row whose key is not UTF-8 text is unreadable.
    func records(ofType type: String?, after key: ObjectKey?, limit: Int) throws -> [RowRead]
    /// The row `key`, a tombstone too, as ``records(ofType:after:limit:)`` reads it, or `nil`.
    func record(_ key: ObjectKey) throws -> RowRead?
    /// The store's format version (see `Schema`).
    func formatVersion() throws -> Int

    // MARK: Fast paths: each has a default built on the primitives (RowStatements+Defaults.swift,
    // +Integrity, +Queries, RowWriteStatements+Rules.swift); an engine implements those it has a
    // faster way to answer, and the tests hold it to the default (`RowRulesTests`, `EngineReportTests`).

    /// How many encryptions the store counted with its current key (0 without a count).
    func encryptionCount() throws -> Int64

    /// The row `key`, or `nil`, with the columns `purpose` needs. Tombstones (the rows of
    /// objects deleted while a copy may be on the server) are skipped by every read but
    /// ``rowOrTombstone(_:for:)`` and ``claimableRows(ofType:status:limit:skipping:)``.
    func row(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow?
    /// The row `key`, a tombstone too (``StoredRow/isDeleted``), or `nil`.
    func rowOrTombstone(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow?
    /// The rows `keys` names, in their order, as ``row(_:for:)`` reads each (`nil` for none).
    /// Default: one ``row(_:for:)`` a key; an engine whose reads are round trips reads them in
    /// one (a page of a sync server's feed is 500 of them).
    func rows(_ keys: [ObjectKey], for purpose: RowPurpose) throws -> [StoredRow?]
    /// The rows of `type`, in identifier order.
    func rows(ofType type: String, for purpose: RowPurpose) throws -> [RowRead]
    /// Calls `body` with each row of `type`, in identifier order, as it is read: a row is let
    /// go once `body` returns, so that a listing need not hold every row at once. `body` may
    /// read other rows meanwhile, on the same statements (a decoder reads the rows a row
    /// references): an engine whose connection can't run a query while it streams another
    /// (one that queues its queries) reads the rows in pages (``rows(ofType:after:limit:for:)``)
    /// and calls `body` between them, never holding a query open across `body`.
    func forEachRow(ofType type: String, for purpose: RowPurpose, _ body: (RowRead) throws -> Void) throws
    /// Up to `limit` rows of `type` whose identifier follows `identifier` (from the first when
    /// `nil`), in identifier order.
    func rows(ofType type: String, after identifier: String?, limit: Int, for purpose: RowPurpose) throws -> [RowRead]
    /// The rows of `type` with `status`, oldest modification first.
    func rows(ofType type: String, status: SyncStatus, for purpose: RowPurpose) throws -> [RowRead]
    /// Up to `limit` rows of `type` a claim of `status` rows takes at `now`
    /// (``RowRules/isClaimable(_:status:now:maximumAttempts:)``), tombstones included, in
    /// ``RowRules/claimOrder(_:_:)``, with every column, but those `excluding` names (rows a
    /// claim could not read, left as they are).
    func claimableRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                       now: Date, maximumAttempts: Int) throws -> [RowRead]
    /// The keys of the rows a claim holds, with the claim's text, in key order.
    func claimedRows() throws -> [(key: ObjectKey, claim: String)]
    /// The rows of `type` with `maximumAttempts` failed upload attempts or more: their
    /// identifiers, attempts and last errors, oldest modification first.
    func heldRows(ofType type: String, maximumAttempts: Int) throws -> [(identifier: String, attempts: Int, lastError: String?)]

    /// The number of rows; of `type`; of `type` with `status`.
    func count() throws -> Int
    func count(ofType type: String) throws -> Int
    func count(ofType type: String, status: SyncStatus) throws -> Int
    /// The number of rows with `status`, per type.
    func countsPerType(status: SyncStatus) throws -> [String: Int]

    /// The identifiers of `type`, in order; with `status`, oldest modification first.
    func identifiers(ofType type: String) throws -> [String]
    func identifiers(ofType type: String, status: SyncStatus) throws -> [String]
    /// The distinct type names of the rows.
    func types() throws -> [String]

    /// The identifiers of the live rows of `query`'s type that match it, in its order (ties in
    /// identifier order), at most its limit: the rule of `RowQuery+Evaluation`, which the
    /// default implementation runs over every row of the type.
    func identifiers(matching query: RowQuery) throws -> [String]
    /// How many live rows of `query`'s type match it, its order and limit aside.
    func count(matching query: RowQuery) throws -> Int
    /// The rows of `identifiers(matching:)`, in its order, with the columns `purpose` needs.
    func rows(matching query: RowQuery, for purpose: RowPurpose) throws -> [StoredRow]

    /// What each type's rows hold (counts, statuses, claims, held rows, tombstones), by type
    /// name; a row is held with `maximumAttempts` failed attempts or more.
    func typeStatistics(maximumAttempts: Int) throws -> [TypeStatistics]

    /// The stamps of the objects of `type` (tombstones excluded), by identifier: of every one,
    /// or of those `identifiers` names. Read leniently: a damaged column reads as `nil`.
    func stamps(ofType type: String, identifiers: [String]?) throws -> [String: RowStamp]

    /// The references to the live objects of `type` (to the one `identifier` names, or to
    /// every one) held by live rows, as (referenced, referrer) pairs in that order: read from
    /// an index of references, without reading the referrers.
    /// Whether another row's references name `key`, live or not (a tombstone's referrers).
    func isReferenced(_ key: ObjectKey) throws -> Bool
    func references(toType type: String, identifier: String?) throws -> [(to: ObjectKey, from: ObjectKey)]

    /// What is wrong with the rows, up to `limit` problems, and whether there were more:
    /// unusable reference lists, invalid JSON, and references to rows that don't exist (the
    /// check of the database's own file is a capability: ``ChecksItsFile``).
    func integrityProblems(limit: Int) throws -> (problems: [IntegrityReport.Problem], isTruncated: Bool)
    /// The first row whose reference list is unusable, with the reason.
    func firstInvalidReferenceList() throws -> (key: ObjectKey, reason: String)?
    /// Up to `limit` references (all when `nil`) to rows that don't exist.
    func danglingReferences(limit: Int?) throws -> [(from: ObjectKey, to: ObjectKey)]
    /// The rows never parked directly that no chain of references leads to from a root or
    /// from `extraRoots`, in type and identifier order.
    func unreachableRows(extraRoots: [ObjectKey]) throws -> [ObjectKey]
}

/// The statements that change the object table, on the writer.
package protocol RowWriteStatements: RowStatements {
    // MARK: Primitives: what an engine must implement

    /// Replaces the store fact `name` (`garage_meta`), if its value is still `previous`
    /// (`nil`: if it has none), with `value` (`nil`: removes it). Returns whether it did.
    @discardableResult func replaceMetadata(_ name: String, previous: String?, with value: String?) throws -> Bool
    /// Runs `body` in one transaction that takes the write lock at once, committed when it
    /// returns and rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T

    /// Stores `row` as it is, every column (a tombstone, a claim, failed attempts too),
    /// replacing the row with its key: what the rules' writes (``RowRules``) store.
    func putRow(_ row: StoredRow) throws
    /// Deletes the row, a tombstone too, leaving nothing; returns whether there was one.
    @discardableResult func purge(_ key: ObjectKey) throws -> Bool
    /// Enforces `guard` (``EncryptionGuard``) from now on, on every write of a row by anyone,
    /// replacing the guard there was, and counts the encryptions of its current key (see
    /// ``RowStatements/encryptionCount()``); without a current key, forgets the count. A
    /// refusal is reported as an error that ``StorageEngine/garageError(_:operation:)`` maps
    /// with ``EncryptionGuard/Refusal/garageError(path:)``.
    func setEncryptionGuard(_ guard: EncryptionGuard) throws

    // MARK: Fast paths: each has a default built on the primitives (RowWriteStatements+Rules.swift,
    // +Defaults); an engine implements those it has a faster way to make.

    /// Sets the store fact `name` to `value`.
    func setMetadata(_ name: String, _ value: String) throws
    /// Sets the store's count of encryptions with its current key (see ``RowStatements/encryptionCount()``).
    func setEncryptionCount(_ count: Int64) throws
    /// Inserts or updates the row: its revision and modification date change only when its
    /// data does; a row once parked as a root stays one. Returns whether the row changed (a
    /// park of what is stored already writes nothing).
    @discardableResult func park(_ key: ObjectKey, _ payload: RowPayload, now: Date) throws -> Bool
    /// Says that the transaction will read and write the rows of `keys` (a claim's end): an engine
    /// that pays per round trip reads them at once; the others do nothing.
    func prepareToWrite(_ keys: [ObjectKey]) throws
    /// Parks each row in order, as ``park(_:_:now:)`` does, and returns whether each changed: an
    /// engine that pays per round trip reads and writes the batch at once.
    func park(_ rows: [(key: ObjectKey, payload: RowPayload)], now: Date) throws -> [Bool]
    /// Deletes the object: its row becomes a tombstone (`.notSynced`, for a sync job to
    /// upload) when a copy may be on the server, and goes otherwise. Returns whether there was
    /// an object.
    @discardableResult func delete(_ key: ObjectKey, now: Date) throws -> Bool
    /// Inserts an imported row as a root (revision 1) whose references are a guess (see
    /// `Schema`'s version 3), unless there is a row `key` already, a tombstone too, which it
    /// leaves as it is; returns whether it inserted.
    @discardableResult func insertImported(_ key: ObjectKey, _ row: ImportedRow) throws -> Bool
    /// Inserts `row` as it is (every column but the claim), unless there is a row `key`
    /// already, a tombstone too, which it leaves as it is; returns whether it inserted.
    @discardableResult func insertRecord(_ key: ObjectKey, _ row: StoredRow) throws -> Bool
    /// Turns the unclaimed row into a tombstone that is `.synced`, keeping its content: the
    /// server deleted the object, so nothing is to upload, but the referrers that still name it
    /// read without it (see `ReferenceCollection`), or, where a property that is not optional
    /// holds it, with its last version. Returns whether there was an unclaimed live row.
    @discardableResult func markDeletedOnServer(_ key: ObjectKey, now: Date) throws -> Bool
    /// Sets the row's status; returns whether it changed (the row exists, with another status).
    @discardableResult func setSyncStatus(_ status: SyncStatus, of key: ObjectKey) throws -> Bool
    /// Deletes every object of `type` as ``delete(_:now:)`` does; with `nil`, purges every row
    /// (a local reset: no tombstones). Returns how many objects there were.
    func deleteAll(ofType type: String?, now: Date) throws -> Int
    /// Deletes the tombstones of `type` (of every type when `nil`) that ``RowRules/isPurgeableTombstone(_:)``
    /// allows and that no other row references: deletions the server has, which nothing reads
    /// any more. Returns how many went.
    @discardableResult func purgeSyncedTombstones(ofType type: String?) throws -> Int
    /// Moves every row of `from` to `to`, replacing rows of `to` with the same identifier,
    /// and rewrites the references to them; returns how many moved. With `reseal`, the data
    /// of each encrypted row moved is re-encrypted for its new key.
    func renameType(from: String, to: String, reseal: RowResealer?) throws -> Int

    /// Runs `body`, a claim, in one transaction: ``transaction(_:)``, or, on an engine whose
    /// claims scale out (several machines), a transaction without the store's write lock, in which
    /// ``claimableRows(ofType:status:limit:excluding:now:maximumAttempts:)`` locks the rows it
    /// returns and skips those another transaction holds (`FOR UPDATE SKIP LOCKED`), and other
    /// reads lock nothing: claims of several jobs, on several machines, take disjoint rows
    /// without waiting for each other or for a write. (A claim's end takes the write lock: ending
    /// claims under their rows' locks alone deadlocked with writes of the same rows.)
    func claimTransaction<T>(_ body: () throws -> T) throws -> T
    /// Runs `body`, the end of a claim, which writes only the claim's own rows, in one
    /// transaction: ``transaction(_:)``, or, on an engine whose claims scale out,
    /// one that shuts out the store's writers but not the ends of other claims (the write lock
    /// taken shared): claims are disjoint, so several jobs end theirs side by side.
    func claimEndTransaction<T>(_ body: () throws -> T) throws -> T
    /// Ends claims without reading their rows: stores `rows` (each as ending its claim makes
    /// it from the row as the claim left it, with that row's ``StoredRow/rowVersion``) in a
    /// transaction of its own, which shuts out writers as ``claimEndTransaction(_:)`` does, if
    /// every row is still as the claim left it (nothing else wrote it since: its version is the
    /// row's); returns the keys it stored: all, or none (or those still unchanged, when a write
    /// of one of them, or another end of the same claim, commits at that instant). An engine
    /// that keeps no row versions stores none; the store then reads the rows and ends their
    /// claims in ``claimEndTransaction(_:)``.
    func endClaimsIfUnchanged(_ rows: [StoredRow]) throws -> Set<ObjectKey>
    /// Creates the index `definition` describes, if it is missing: over the live rows of its
    /// type, each field's value read from the row's JSON by the very expression the engine's
    /// query SQL compares, so that a query's condition on it reads the index.
    func createQueryIndex(_ definition: QueryIndexDefinition) throws
    /// Drops the index `definition` names, if present.
    func dropQueryIndex(_ definition: QueryIndexDefinition) throws
    /// Takes up to `limit` of the rows ``claimableRows(ofType:status:limit:excluding:now:maximumAttempts:)``
    /// gives, marks those it can read claimed by `claim` at `now` (``markClaimed(_:claim:at:)``),
    /// and returns them as they were before, in ``RowRules/claimOrder(_:_:)``; a row it can't
    /// read is returned unreadable, and left as it is. The default reads, then marks; an engine
    /// may do both in one statement.
    func claimRows(ofType type: String, status: SyncStatus, limit: Int, excluding: Set<ObjectKey>,
                   claim: String, now: Date, maximumAttempts: Int) throws -> [RowRead]
    /// Gives back rows ``claimRows(ofType:status:limit:excluding:claim:now:maximumAttempts:)``
    /// took for `claim` (`originals`, as it returned them): what the marking changed (status,
    /// claim, claim date, `isRemote`, base) goes back to the original's, and nothing else is
    /// written; a row no longer under `claim` is left alone.
    func restoreClaimed(_ originals: [StoredRow], claim: String) throws
    /// Moves the rows to `.syncing` under `claim`.
    func markClaimed(_ keys: [ObjectKey], claim: String, at date: Date) throws
    /// Ends the row's claim, setting its status (leaving it when `nil`). A completed claim
    /// (`failure` nil, `completed`) forgets the row's failed attempts; a failed one counts one
    /// more, with its error, and holds the row back until `retryAt`. `uploaded` (the data a
    /// completed upload sent, when the row changed meanwhile) becomes the row's base; a row
    /// that ends `.synced` has none (``RowRules``, "Bases"). `version` (the server's version of a
    /// completed upload) becomes the row's server version; `nil` keeps it. `forgettingBase` (the
    /// data of a first upload the server answered with a conflict) is no longer the row's base
    /// if it still is (``RowRules``, "Bases").
    func endClaim(_ key: ObjectKey, status: SyncStatus?, completed: Bool,
                  failure: (error: String?, retryAt: Date)?, uploaded: String?, version: String?,
                  forgettingBase: String?) throws
    /// Ends the claims of `keys` alike, as ``endClaim(_:status:completed:failure:uploaded:version:forgettingBase:)``
    /// does without a failure, an upload's data or a server version (most of a batch's ends).
    func endClaims(_ keys: [ObjectKey], status: SyncStatus?, completed: Bool) throws
    /// Forgets the failed attempts of the rows of `type` (those `identifiers` name, or all), so
    /// that claims take them again; returns how many there were.
    func forgetAttempts(ofType type: String, identifiers: [String]?) throws -> Int
    /// Ends every claim taken before `cutoff` (rows still `.syncing` go back to `.notSynced`);
    /// returns the rows released.
    func releaseClaims(takenBefore cutoff: Date) throws -> [ObjectKey]

    /// The next `limit` rows (tombstones excepted) stored encrypted, or unencrypted, after the
    /// row `key` (`nil`: from the first), in key order (type name, then identifier), with their
    /// data and base.
    func rows(encrypted: Bool, after key: ObjectKey?, limit: Int) throws -> [(key: ObjectKey, data: String, base: String?)]
    /// How many rows (tombstones excepted) are stored encrypted, or unencrypted.
    func countRows(encrypted: Bool) throws -> Int
    /// Replaces the data of the row `key`, if it is still `previous`, with `data` (encrypted, or
    /// not), and its base with `base`: the same contents, re-encrypted or decrypted, so the
    /// row's revision, dates and status stay. Returns whether it replaced.
    @discardableResult func replaceData(of key: ObjectKey, previous: String, with data: String, base: String?,
                                        isEncrypted: Bool) throws -> Bool
}
