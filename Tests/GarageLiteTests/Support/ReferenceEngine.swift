import Foundation
@testable import GarageLite
import GarageLiteSQLite

/// The reference engine: rows in memory, and only the primitives of the engine boundary
/// (``RowStatements`` and ``RowWriteStatements``: a row by key, rows in key order, the store's
/// facts, a row stored, a row removed, a transaction, a snapshot, the encryption guard). Every
/// other statement is the boundary's default, built on those: the rules written once, in Swift.
///
/// The tests hold each engine's fast paths to it (`RowRulesTests`, `EngineReportTests`,
/// `EncryptionGuardTests`, `QueryRuleTests`), and `GARAGE_TEST_ENGINE=reference` runs the
/// behaviour suite on it (a garage on it is ``TestEngine/referenceGarage(encryptionKey:)``).
///
/// Writes are serialized (one writer at a time); a read outside a transaction sees what was
/// committed when it runs, and a snapshot what was committed when it began.
///
/// Several engines may open one store (``opening(sharing:)``), as garages open one file: each
/// then watches the others' commits (``WatchesOtherCommits``, a capability, at its interval).
final class ReferenceEngine: StorageEngine, WatchesOtherCommits {
    /// What the store holds: its rows, its facts, and the guard every write of a row obeys.
    struct Tables {
        var rows: [ObjectKey: StoredRow] = [:]
        var facts: [String: String] = [:]
        var encryptionGuard = EncryptionGuard(current: nil)
        /// How many transactions committed, by every engine on the store.
        var commits = 0
    }

    /// The store: what is committed, and its writer's lock, shared by the engines that open it.
    final class Store: Sendable {
        let committed = Protected(Tables())
        /// Held by a writer: one at a time.
        let writer = NSLock()
    }

    let store: Store
    /// Whether other engines can open the store (one opened by path).
    let isShared: Bool
    /// How many of the store's commits this engine made.
    private let ownCommits = Protected(0)
    /// When set, the counter of others' commits stays at this value, as when the news of a
    /// commit made elsewhere is on its way (PostgreSQL's notification): a test of the watch.
    let othersCommitCounterHeld = Protected<Int?>(nil)

    var committed: Protected<Tables> { store.committed }
    private var writer: NSLock { store.writer }

    /// An engine on a new store, which no other engine opens.
    init() {
        store = Store()
        isShared = false
    }

    /// An engine on `store`, which other engines may open too.
    init(sharing store: Store) {
        self.store = store
        isShared = true
    }

    var path: String? { nil }
    var isReadOnly: Bool { false }

    /// Counts a commit of this engine.
    fileprivate func didCommit() {
        committed.write { $0.commits += 1 }
        ownCommits.write { $0 += 1 }
    }

    func startWatch(_ body: @escaping @Sendable (Result<any CountsOtherCommits, any Error>) -> Void) {
        startWrite("watch") { result in body(result.map { $0 as! Statements }) }
    }

    func read<T>(_ operation: @autoclosure () -> String, _ body: (any RowStatements) throws -> T) throws -> T {
        do {
            return try body(Statements(engine: self, writes: false))
        } catch {
            throw garageError(error, operation: operation())
        }
    }

    func startRead(_ operation: String, _ body: @escaping @Sendable (Result<any RowStatements, any Error>) -> Void) {
        Thread.detachNewThread { body(.success(Statements(engine: self, writes: false))) }
    }

    func write<T>(_ operation: String, _ body: (any RowWriteStatements) throws -> T) throws -> T {
        writer.lock()
        defer { writer.unlock() }
        do {
            return try body(Statements(engine: self, writes: true))
        } catch {
            throw garageError(error, operation: operation)
        }
    }

    func startWrite(_ operation: String, _ body: @escaping @Sendable (Result<any RowWriteStatements, any Error>) -> Void) {
        Thread.detachNewThread {
            self.writer.lock()
            defer { self.writer.unlock() }
            body(.success(Statements(engine: self, writes: true)))
        }
    }

    func garageError(_ error: any Error, operation: String) -> any Error {
        (error as? EncryptionGuard.Refusal)?.garageError(path: ":memory:") ?? error
    }

    /// The statements of one connection: a reader, or the writer.
    final class Statements: RowWriteStatements, CountsOtherCommits {
        let engine: ReferenceEngine
        let writes: Bool
        /// The tables a transaction (the writer's) or a snapshot (a reader's) works on.
        private var open: Tables?

        init(engine: ReferenceEngine, writes: Bool) {
            self.engine = engine
            self.writes = writes
        }

        /// The tables the statements read: the transaction's or the snapshot's, else the committed ones.
        private var tables: Tables { open ?? engine.committed.read { $0 } }

        /// Changes the tables: the transaction's, or, outside one, the committed ones at once.
        private func change<T>(_ body: (inout Tables) throws -> T) throws -> T {
            precondition(writes, "a reader's statements don't write")
            if open != nil { return try body(&open!) }
            defer { engine.didCommit() }
            return try engine.committed.write { try body(&$0) }
        }

        func othersCommitCounter() throws -> Int {
            if let held = engine.othersCommitCounterHeld.read({ $0 }) { return held }
            return engine.committed.read(\.commits) - engine.ownCommits.read { $0 }
        }

        // MARK: Reads

        func metadata(_ name: String) throws -> String? {
            tables.facts[name]
        }

        func snapshot<T>(_ body: () throws -> T) throws -> T {
            if open != nil { return try body() }
            open = engine.committed.read { $0 }
            defer { open = nil }
            return try body()
        }

        func records(ofType type: String?, after key: ObjectKey?, limit: Int) throws -> [RowRead] {
            let rows = tables.rows
            return rows.keys
                .filter { candidate in
                    (type == nil || candidate.typeName == type) && (key.map { ObjectKey.storeOrder($0, candidate) } ?? true)
                }
                .sorted(by: ObjectKey.storeOrder)
                .prefix(limit)
                .map { .row(rows[$0]!) }
        }

        func record(_ key: ObjectKey) throws -> RowRead? {
            tables.rows[key].map { .row($0) }
        }

        func formatVersion() throws -> Int {
            Schema.formatVersion
        }

        // MARK: Writes

        @discardableResult func replaceMetadata(_ name: String, previous: String?, with value: String?) throws -> Bool {
            try change { tables in
                guard tables.facts[name] == previous else { return false }
                tables.facts[name] = value
                return true
            }
        }

        /// A savepoint in a transaction already open: rolled back alone when `body` throws.
        func transaction<T>(_ body: () throws -> T) throws -> T {
            precondition(writes, "a reader's statements don't write")
            let outer = open
            open = outer ?? engine.committed.read { $0 }
            do {
                let result = try body()
                if outer == nil {
                    var tables = open!
                    engine.committed.write { committed in
                        tables.commits = committed.commits
                        committed = tables
                    }
                    open = nil
                    engine.didCommit()
                }
                return result
            } catch {
                open = outer
                throw error
            }
        }

        /// Obeys the encryption guard, as every write of a row does, and counts the encryptions it allows.
        func putRow(_ row: StoredRow) throws {
            var stored = row
            stored.rowVersion = nil
            stored.provisional = nil
            stored.sealedFor = nil
            try change { tables in
                let old = tables.rows[row.key].map { (data: $0.data, isEncrypted: $0.isEncrypted) }
                let encryptions = tables.facts["encryptions"].flatMap { Int64($0) } ?? 0
                if try tables.encryptionGuard.check(writing: (row.data, row.isEncrypted), over: old, encryptions: encryptions) {
                    tables.facts["encryptions"] = String(encryptions + 1)
                }
                tables.rows[row.key] = stored
            }
        }

        @discardableResult func purge(_ key: ObjectKey) throws -> Bool {
            try change { $0.rows.removeValue(forKey: key) != nil }
        }

        func setEncryptionGuard(_ guard: EncryptionGuard) throws {
            try change { tables in
                tables.encryptionGuard = `guard`
                if `guard`.current == nil { tables.facts["encryptions"] = nil }
            }
        }
    }
}
