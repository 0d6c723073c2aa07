import Foundation
import GarageLiteCore

// Checking a store, and collecting the objects nothing leads to any more.
extension Garage {
    // MARK: - Checking

    /// The number of problems ``check(maximumProblems:)-3x71a`` lists by default, as SQLite's
    /// `integrity_check` does.
    public static let defaultMaximumProblems = 100

    /// Checks the store: SQLite's integrity check of the file, the JSON of every unencrypted
    /// object, and every stored reference. Returns the problems found; throws only when the
    /// check can't run at all.
    ///
    /// ```swift
    /// let report = try garage.check()
    /// if !report.isOK {
    ///     log("\(report)")      // each problem names the object and says what to do
    /// }
    /// ```
    ///
    /// The check needs none of your Swift types: it reads the store's columns, so it finds the
    /// same problems whatever program runs it. It reports:
    ///
    /// - ``IntegrityReport/Problem/sqlite(_:)``: damage SQLite finds in the file (SQLite's
    ///   `integrity_check`), or a failure to read the rows because of it;
    /// - ``IntegrityReport/Problem/invalidReferenceList(typeName:identifier:reason:)``: a row
    ///   whose list of references is unusable, which also stops ``collectGarbage(dryRun:)-1yt3b``;
    /// - ``IntegrityReport/Problem/invalidJSON(typeName:identifier:reason:)``: an unencrypted
    ///   row whose data is not JSON (encrypted rows can't be checked without their key);
    /// - ``IntegrityReport/Problem/danglingReference(fromType:fromIdentifier:toType:toIdentifier:)``:
    ///   a reference to an object that is not parked, typically deleted after its parent was parked;
    /// - ``IntegrityReport/Problem/wrongTypeReference(fromType:fromIdentifier:toType:toIdentifier:foundTypes:)``:
    ///   the same, when the identifier is parked under other types, as after renaming a type
    ///   without ``migrateAll(fromOldClassName:to:)-73yt5``.
    /// - ``IntegrityReport/Problem/unreadableEncryptedRow(typeName:identifier:reason:)``: with a
    ///   ``dataEncryptionDelegate``, an encrypted row it can't decrypt (with ``AESGCMEncryptor``:
    ///   a ciphertext moved from another row, altered, or of another key), and, when the delegate
    ///   binds its rows, a row stored unencrypted. Every encrypted row is decrypted: the check
    ///   then takes about as long as retrieving everything.
    ///
    /// Everything is read from one snapshot of the committed store: this garage's unsaved
    /// changes are not checked. SQLite's check reads the whole file, so the cost grows with the
    /// store; run it at launch after a crash, in a maintenance task, or before a backup. (On an
    /// engine that can't check its own storage, see ``GarageEngine``, the report lists the
    /// problems of the rows only.)
    ///
    /// - parameter maximumProblems: The number of problems to list at most (at least 1);
    ///   ``IntegrityReport/isTruncated`` tells whether there were more.
    /// - throws: ``GarageError/storageFailure(operation:reason:)`` when the store can't be read
    ///   at all; ``GarageError/reentrantCall(operation:)``.
    public func check(maximumProblems: Int = Garage.defaultMaximumProblems) throws -> IntegrityReport {
        try run(store.checking(limit: max(1, maximumProblems), open: decryptionCheck()))
    }

    /// Checks the store (see ``check(maximumProblems:)-3x71a``) without blocking the calling thread.
    public nonisolated(nonsending) func check(maximumProblems: Int = Garage.defaultMaximumProblems) async throws -> IntegrityReport {
        try await run(store.checking(limit: max(1, maximumProblems), open: decryptionCheck()))
    }

    // MARK: - Collecting garbage

    /// Deletes the objects that were only ever parked as references and that no chain of
    /// references from a directly parked object leads to any more. With `dryRun` (the
    /// default), only lists them: run a dry run first, and look at what it lists.
    ///
    /// ```swift
    /// let preview = try garage.collectGarbage()                // deletes nothing
    /// print(preview)                                           // "Dry run: 3 unreachable objects would be deleted: ..."
    /// let report = try garage.collectGarbage(dryRun: false)    // deletes them
    /// ```
    ///
    /// Parking a parent parks the objects it references; parking it again without one of them,
    /// or deleting the parent, leaves that object behind, as in GarageStorage, and stores grow
    /// forever. An object parked directly (with ``park(_:children:)-3a5in`` or ``parkAll(_:children:)-58r2e``) is a *root*,
    /// and stays one even when it is later parked as a reference too: it is never collected,
    /// nor is anything a root leads to, however long the chain. Unreachable objects that
    /// reference each other in a cycle are collected together.
    ///
    /// - The real run decides and deletes in one immediate transaction: parks from other
    ///   threads, garages or processes wait for it, so none can slip a new reference in between.
    ///   A dry run reads one snapshot and blocks nobody; the real run decides again.
    /// - This garage's unsaved changes (autosave off), and those of the transactions the call
    ///   runs in, are neither saved nor discarded: every object they park, delete or change,
    ///   and every object they reference, counts as a root, so a later save never refers to a
    ///   collected object. The collection itself is not part of a transaction: it commits at
    ///   once. Another garage's unsaved changes can't be seen: when it saves them, it parks
    ///   again every object its parents reference, but a status it set on a collected object is
    ///   lost with the object.
    /// - A reference names the type it was parked with. When the identifier it names is not
    ///   parked under that type but is under another (rows moved to another type name other
    ///   than by ``migrateAll(fromOldClassName:to:)-73yt5``; ``check(maximumProblems:)-3x71a`` reports a
    ///   wrong-type reference), the objects of that identifier are kept, as the reference may
    ///   still mean them.
    /// - An object claimed by a sync job is collected like any other; the job's
    ///   ``complete(_:)-26tgn`` or ``release(_:)-2mefx`` then lists it in ``ClaimReport/deleted``.
    /// - Observers of ``changes(of:)`` receive `.deleted` for each collected object.
    ///
    /// - throws: ``GarageError/corruptData(typeName:identifier:reason:)`` when a row's list of
    ///   references is unusable (``check(maximumProblems:)-3x71a`` lists them all): what it leads to
    ///   can't be told, so nothing is deleted. ``GarageError/storeBusy(operation:path:)``.
    @discardableResult
    public func collectGarbage(dryRun: Bool = true) throws -> GarbageReport {
        GarbageReport(isDryRun: dryRun, objects: try run(store.collectingGarbage(dryRun: dryRun, transactions: transactionChanges())))
    }

    /// Collects garbage (see ``collectGarbage(dryRun:)-1yt3b``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func collectGarbage(dryRun: Bool = true) async throws -> GarbageReport {
        GarbageReport(isDryRun: dryRun,
                      objects: try await run(store.collectingGarbage(dryRun: dryRun, transactions: transactionChanges())))
    }
}
