import Crypto
@testable import GarageLite
import Foundation
import Testing

/// Every public operation, run synchronously on one store and asynchronously on an identical
/// one, must give the same result (or the same error) and leave the same rows: each is one
/// description of its work, run by two runners.
///
/// On the test engine, but not in the PostgreSQL pass: its 304 cases, each with two garages, run
/// side by side, open more connections than a server takes, and took over 5 minutes there.
@Suite("Sync and async give the same results",
       .disabled(if: TestEngine.isPostgres, "304 cases of two garages each: more connections than the server takes"))
struct SyncAsyncParityTests {
    /// The stores an operation runs on.
    enum Scenario: String, CaseIterable, CustomTestStringConvertible {
        /// A graph, sync statuses, a Hashable object, an open claim.
        case good
        /// The same, with a book whose JSON is corrupt and an author whose creation date is text.
        case damaged
        /// The same as good, with unsaved changes (autosave off) on top.
        case unsaved
        /// The same as good, with every row encrypted, read without a delegate.
        case encryptedWithoutKey

        var testDescription: String { rawValue }
    }

    /// One operation, both ways; its result described as text (errors too).
    struct Operation: Sendable, CustomTestStringConvertible {
        let name: String
        let sync: @Sendable (Garage) throws -> String
        let async: @Sendable (Garage) async throws -> String

        var testDescription: String { name }

        init(_ name: String, sync: @escaping @Sendable (Garage) throws -> some Any,
             async: @escaping @Sendable (Garage) async throws -> some Any) {
            self.name = name
            self.sync = { String(describing: try sync($0)) }
            self.async = { String(describing: try await async($0)) }
        }
    }

    static let sam = Author(id: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, name: "Sam")
    static let max = Author(id: UUID(uuidString: "00000000-0000-0000-0000-000000000002")!, name: "Max")

    /// The golden GarageStorage store (read from a copy: the import never changes it).
    static let garageStorageStore = FixtureFile.fixturesFolder.appendingPathComponent("garagestorage/store.garagestorage")

    static let merge: @Sendable (Book, Book) throws -> Book = { local, downloaded in
        var merged = downloaded
        merged.title = downloaded.title + " + " + local.title
        return merged
    }

    static let operations: [Operation] = [
        Operation("park", sync: { try $0.park(Book(id: 9, title: "New", author: sam)) },
                  async: { try await $0.park(Book(id: 9, title: "New", author: sam)) }),
        Operation("parkAll", sync: { try $0.parkAll([Counter(id: 1, value: 5), Counter(id: 7, value: 7)]) },
                  async: { try await $0.parkAll([Counter(id: 1, value: 5), Counter(id: 7, value: 7)]) }),
        Operation("parkAll streaming", sync: { try $0.parkAll((0..<1_200).map { Counter(id: $0, value: -$0) }) },
                  async: { try await $0.parkAll((0..<1_200).map { Counter(id: $0, value: -$0) }) }),
        Operation("park children", sync: { try $0.park(Book(id: 1, title: "Edited", author: max), children: .onlyNew) },
                  async: { try await $0.park(Book(id: 1, title: "Edited", author: max), children: .onlyNew) }),
        Operation("park inout", sync: { garage in
            var note = RNote(id: "n1", text: "New")
            try garage.park(&note, children: .keepStored)
            note.text = "Edited"
            try garage.park(&note)
            // Unsaved, a provisional revision, unique in the process: compared by what it stands for.
            return note.revision < 0 ? -1 : note.revision
        }, async: { garage in
            var note = RNote(id: "n1", text: "New")
            try await garage.park(&note, children: .keepStored)
            note.text = "Edited"
            try await garage.park(&note)
            return note.revision < 0 ? -1 : note.revision
        }),
        Operation("park stale", sync: { try $0.park(RNote(id: "n1", text: "Gone", revision: 4)) },
                  async: { try await $0.park(RNote(id: "n1", text: "Gone", revision: 4)) }),
        Operation("parkAll children", sync: { try $0.parkAll([Book(id: 7, title: "New", author: max)], children: .all) },
                  async: { try await $0.parkAll([Book(id: 7, title: "New", author: max)], children: .all) }),
        Operation("parkAll children streaming", sync: { try $0.parkAll((0..<1_200).map { RNote(id: "\($0)", text: "") }, children: .keepStored) },
                  async: { try await $0.parkAll((0..<1_200).map { RNote(id: "\($0)", text: "") }, children: .keepStored) }),
        Operation("retrieve", sync: { try $0.retrieve(Book.self, identifier: 1).map(describe) },
                  async: { try await $0.retrieve(Book.self, identifier: 1).map(describe) }),
        Operation("retrieve damaged", sync: { try $0.retrieve(Book.self, identifier: 2).map(describe) },
                  async: { try await $0.retrieve(Book.self, identifier: 2).map(describe) }),
        Operation("retrieve author", sync: { try $0.retrieve(Author.self, identifier: max.id)?.name },
                  async: { try await $0.retrieve(Author.self, identifier: max.id)?.name }),
        Operation("retrieveAll", sync: { try $0.retrieveAll(Book.self).map(describe) },
                  async: { try await $0.retrieveAll(Book.self).map(describe) }),
        Operation("retrieveAllLossy", sync: { describe(try $0.retrieveAllLossy(Book.self)) },
                  async: { describe(try await $0.retrieveAllLossy(Book.self)) }),
        Operation("retrieveAll withStatus", sync: { try $0.retrieveAll(Author.self, withStatus: .notSynced).map(\.name) },
                  async: { try await $0.retrieveAll(Author.self, withStatus: .notSynced).map(\.name) }),
        Operation("delete", sync: { try $0.delete(Counter(id: 1, value: 1)) },
                  async: { try await $0.delete(Counter(id: 1, value: 1)) }),
        Operation("delete missing", sync: { try $0.delete(Counter(id: 99, value: 1)) },
                  async: { try await $0.delete(Counter(id: 99, value: 1)) }),
        Operation("delete by identifier", sync: { try $0.delete(Book.self, identifier: 1) },
                  async: { try await $0.delete(Book.self, identifier: 1) }),
        Operation("parkDownloaded", sync: { try $0.parkDownloaded([Book(id: 1, title: "Server", author: max), Book(id: 4, title: "New", author: max)]) },
                  async: { try await $0.parkDownloaded([Book(id: 1, title: "Server", author: max), Book(id: 4, title: "New", author: max)]) }),
        Operation("parkDownloaded merging", sync: { try $0.parkDownloaded([Book(id: 2, title: "Server", author: sam)], onConflict: .merge(merge)) },
                  async: { try await $0.parkDownloaded([Book(id: 2, title: "Server", author: sam)], onConflict: .merge(merge)) }),
        Operation("deleteDownloaded", sync: { try $0.deleteDownloaded(Book.self, identifiers: [1, 2, 3], onConflict: .takeDownloaded) },
                  async: { try await $0.deleteDownloaded(Book.self, identifiers: [1, 2, 3], onConflict: .takeDownloaded) }),
        Operation("delete referenced", sync: { try $0.delete(max) }, async: { try await $0.delete(max) }),
        Operation("delete nullify", sync: { try $0.delete(max, rule: .nullify(in: Book.self)) },
                  async: { try await $0.delete(max, rule: .nullify(in: Book.self)) }),
        Operation("delete nullify refused", sync: { try $0.delete(Author.self, identifier: sam.id, rule: .nullify(in: Book.self)) },
                  async: { try await $0.delete(Author.self, identifier: sam.id, rule: .nullify(in: Book.self)) }),
        Operation("delete rowOnly", sync: { try $0.delete(sam, rule: .rowOnly) }, async: { try await $0.delete(sam, rule: .rowOnly) }),
        Operation("referrers", sync: { try $0.referrers(of: sam) }, async: { try await $0.referrers(of: sam) }),
        Operation("referrers by identifier", sync: { try $0.referrers(of: Author.self, identifier: max.id) },
                  async: { try await $0.referrers(of: Author.self, identifier: max.id) }),
        Operation("deleteAll", sync: { try $0.deleteAll(Book.self) }, async: { try await $0.deleteAll(Book.self) }),
        Operation("deleteAll denied", sync: { try $0.deleteAll(Author.self) }, async: { try await $0.deleteAll(Author.self) }),
        Operation("deleteAll nullify", sync: { try $0.deleteAll(Author.self, rule: .nullify(in: Book.self)) },
                  async: { try await $0.deleteAll(Author.self, rule: .nullify(in: Book.self)) }),
        Operation("importGarageStorageStore", sync: { try $0.importGarageStorageStore(at: garageStorageStore) },
                  async: { try await $0.importGarageStorageStore(at: garageStorageStore) }),
        Operation("deleteAllObjects", sync: { try $0.deleteAllObjects() }, async: { try await $0.deleteAllObjects() }),
        Operation("migrateAll", sync: { try $0.migrateAll(fromOldClassName: "Counter", to: Tally.self) },
                  async: { try await $0.migrateAll(fromOldClassName: "Counter", to: Tally.self) }),
        Operation("count", sync: { try $0.count(Author.self) }, async: { try await $0.count(Author.self) }),
        Operation("settings: set then read", sync: { garage in
            try garage.set(7, for: paritySetting)
            return try garage.value(for: paritySetting)
        }, async: { garage in
            try await garage.set(7, for: paritySetting)
            return try await garage.value(for: paritySetting)
        }),
        Operation("settings: read the default", sync: { try $0.value(for: paritySetting) },
                  async: { try await $0.value(for: paritySetting) }),
        Operation("settings: update", sync: { try $0.updateValue(for: paritySetting) { $0 * 10 } },
                  async: { try await $0.updateValue(for: paritySetting) { $0 * 10 } }),
        Operation("encrypt unencrypted objects", sync: { garage in
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: parityKey)
            return try garage.encryptUnencryptedObjects()
        }, async: { garage in
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: parityKey)
            return try await garage.encryptUnencryptedObjects()
        }),
        Operation("re-encrypt objects", sync: { garage in
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: parityKey)
            _ = try garage.encryptUnencryptedObjects()
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: parityKey2, keyID: 2, previousKeys: [1: parityKey])
            return try decryptionOutcome { try garage.reencryptObjects() }
        }, async: { garage in
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: parityKey)
            _ = try await garage.encryptUnencryptedObjects()
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: parityKey2, keyID: 2, previousKeys: [1: parityKey])
            return try await decryptionOutcome { try await garage.reencryptObjects() }
        }),
        Operation("decrypt all objects", sync: { garage in
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: parityKey)
            _ = try garage.encryptUnencryptedObjects()
            return try decryptionOutcome { try garage.decryptAllObjects() }
        }, async: { garage in
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: parityKey)
            _ = try await garage.encryptUnencryptedObjects()
            return try await decryptionOutcome { try await garage.decryptAllObjects() }
        }),
        Operation("store key: lock, change, status", sync: { garage in
            let locked = try TestEngine.garage(reopening: garage, encryptionKey: parityStoreKey)
            try locked.changeEncryptionKey(to: parityStoreKey2)
            return try locked.encryptionStatus()
        }, async: { garage in
            let locked = try TestEngine.garage(reopening: garage, encryptionKey: parityStoreKey)
            try await locked.changeEncryptionKey(to: parityStoreKey2)
            return try await locked.encryptionStatus()
        }),
        Operation("store key: rekey", sync: { garage in
            let locked = try TestEngine.garage(reopening: garage, encryptionKey: parityStoreKey)
            return try decryptionOutcome { try locked.rekey(to: parityStoreKey2) } + " \(try locked.encryptionStatus())"
        }, async: { garage in
            let locked = try TestEngine.garage(reopening: garage, encryptionKey: parityStoreKey)
            return try await decryptionOutcome { try await locked.rekey(to: parityStoreKey2) } + " \(try await locked.encryptionStatus())"
        }),
        Operation("settings: remove", sync: { try $0.removeValue(for: paritySetting) },
                  async: { try await $0.removeValue(for: paritySetting) }),
        Operation("settings: migrate", sync: { garage in
            try garage.set("3", for: parityLegacySetting)
            return try garage.migrate([SettingsMigration(to: paritySetting, from: parityLegacySetting) { Int($0) ?? 0 }])
        }, async: { garage in
            try await garage.set("3", for: parityLegacySetting)
            return try await garage.migrate([SettingsMigration(to: paritySetting, from: parityLegacySetting) { Int($0) ?? 0 }])
        }),
        Operation("register a renamed type", sync: { try $0.register(Tally.self, formerTypeNames: ["Counter"]) },
                  async: { try await $0.register(Tally.self, formerTypeNames: ["Counter"]) }),
        Operation("explicit transaction", sync: { garage in
            try garage.beginTransaction()
            try garage.park(Counter(id: 3, value: 3))
            try garage.commitTransaction()
            return try garage.count(Counter.self)
        }, async: { garage in
            try garage.beginTransaction()
            try await garage.park(Counter(id: 3, value: 3))
            try await garage.commitTransaction()
            return try await garage.count(Counter.self)
        }),
        Operation("count everything", sync: { try $0.count() }, async: { try await $0.count() }),
        Operation("park a record", sync: { try $0.park(["a", "b"], identifier: "list") },
                  async: { try await $0.park(["a", "b"], identifier: "list") }),
        Operation("count withStatus", sync: { try $0.count(Author.self, withStatus: .synced) },
                  async: { try await $0.count(Author.self, withStatus: .synced) }),
        Operation("identifiers", sync: { try $0.identifiers(of: Book.self) }, async: { try await $0.identifiers(of: Book.self) }),
        Operation("identifiers withStatus", sync: { try $0.identifiers(of: Author.self, withStatus: .notSynced) },
                  async: { try await $0.identifiers(of: Author.self, withStatus: .notSynced) }),
        Operation("syncStatusCounts", sync: { sorted(try $0.syncStatusCounts()) }, async: { sorted(try await $0.syncStatusCounts()) }),
        Operation("metadata", sync: { describe(try $0.metadata(Author.self, identifier: max.id)) },
                  async: { describe(try await $0.metadata(Author.self, identifier: max.id)) }),
        Operation("metadata for", sync: { describe(try $0.metadata(for: sam)) }, async: { describe(try await $0.metadata(for: sam)) }),
        Operation("syncStatus for", sync: { try $0.syncStatus(for: sam) }, async: { try await $0.syncStatus(for: sam) }),
        Operation("setSyncStatus", sync: { try $0.setSyncStatus(.synced, for: [sam, max]) },
                  async: { try await $0.setSyncStatus(.synced, for: [sam, max]) }),
        Operation("claim", sync: { describe(try $0.claim(Author.self, limit: 10)) },
                  async: { describe(try await $0.claim(Author.self, limit: 10)) }),
        Operation("claim and complete", sync: { try $0.complete(try $0.claim(Book.self, limit: 10)) },
                  async: { try await $0.complete(try await $0.claim(Book.self, limit: 10)) }),
        Operation("claim and release", sync: { try $0.release(try $0.claim(Book.self, limit: 10)) },
                  async: { try await $0.release(try await $0.claim(Book.self, limit: 10)) }),
        Operation("releaseStaleClaims", sync: { try $0.releaseStaleClaims(olderThan: -1) },
                  async: { try await $0.releaseStaleClaims(olderThan: -1) }),
        Operation("check", sync: { try $0.check() }, async: { try await $0.check() }),
        Operation("collectGarbage dry run", sync: { try $0.collectGarbage() }, async: { try await $0.collectGarbage() }),
        Operation("collectGarbage", sync: { try $0.collectGarbage(dryRun: false) }, async: { try await $0.collectGarbage(dryRun: false) }),
        Operation("save", sync: { try $0.save() }, async: { try await $0.save() }),
        Operation("transaction", sync: { garage in
            try garage.transaction {
                try garage.park(Counter(id: 3, value: 3))
                try garage.delete(Counter(id: 1, value: 1))
                return try garage.count(Counter.self)
            }
        }, async: { garage in
            try await garage.transaction {
                try await garage.park(Counter(id: 3, value: 3))
                try await garage.delete(Counter(id: 1, value: 1))
                return try await garage.count(Counter.self)
            }
        }),
        Operation("forEach", sync: { garage in
            var names: [String] = []
            try garage.forEach(Author.self, batchSize: 1) { names.append($0.name) }
            return names
        }, async: { garage in
            var names: [String] = []
            try await garage.forEach(Author.self, batchSize: 1) { author in
                await Task.yield()          // an async body: the async forEach
                names.append(author.name)
            }
            return names
        }),
        Operation("forEach, a body that doesn't await", sync: { garage in
            var names: [String] = []
            try garage.forEach(Author.self, batchSize: 2) { names.append($0.name) }
            return names
        }, async: { garage in
            var names: [String] = []
            try await garage.forEach(Author.self, batchSize: 2) { names.append($0.name) }
            return names
        }),
        Operation("records", sync: { try describe($0.records(limit: 100)) }, async: { try await describe($0.records(limit: 100)) }),
        Operation("record", sync: { try describe([$0.record(ObjectKey(typeName: "Book", identifier: "1"))].compactMap { $0 }) },
                  async: { try await describe([$0.record(ObjectKey(typeName: "Book", identifier: "1"))].compactMap { $0 }) }),
        Operation("importRecords", sync: { garage in
            try garage.importRecords(importable(try garage.records(ofType: "Counter", limit: 10)))
        }, async: { garage in
            try await garage.importRecords(importable(try await garage.records(ofType: "Counter", limit: 10)))
        }),
        Operation("statistics", sync: { try describe($0.statistics()) }, async: { try await describe($0.statistics()) }),
        Operation("release retryAfter, heldObjects, retryHeld", sync: { garage in
            garage.maximumUploadAttempts = 1
            let claim = try garage.claim(Counter.self, limit: 5)
            let report = try garage.release(claim, retryAfter: 0, error: ParityFailure())
            return "\(describe(report)) \(try garage.heldObjects(Counter.self).map(describe)) \(try garage.retryHeld(Counter.self))"
        }, async: { garage in
            garage.maximumUploadAttempts = 1
            let claim = try await garage.claim(Counter.self, limit: 5)
            let report = try await garage.release(claim, retryAfter: 0, error: ParityFailure())
            return "\(describe(report)) \(try await garage.heldObjects(Counter.self).map(describe)) \(try await garage.retryHeld(Counter.self))"
        }),
        Operation("complete rejected", sync: { garage in
            let claim = try garage.claim(Counter.self, limit: 5)
            return describe(try garage.complete(claim, rejected: ["1": ParityFailure()], retryAfter: 0))
        }, async: { garage in
            let claim = try await garage.claim(Counter.self, limit: 5)
            return describe(try await garage.complete(claim, rejected: ["1": ParityFailure()], retryAfter: 0))
        }),
        Operation("withAutosaveDisabled", sync: { garage in
            try garage.withAutosaveDisabled {
                try garage.park(Counter(id: 8, value: 8))
                return garage.hasUnsavedChanges
            }
        }, async: { garage in
            try await garage.withAutosaveDisabled {
                try await garage.park(Counter(id: 8, value: 8))
                return garage.hasUnsavedChanges
            }
        }),
        Operation("date strategies", sync: { garage in
            try garage.withDateEncodingStrategy(.secondsSince1970) { try garage.park(Dated(id: 1, date: parityDate)) }
            return try garage.withDateDecodingStrategy(.secondsSince1970) { try garage.retrieve(Dated.self, identifier: 1)?.date }
        }, async: { garage in
            try await garage.withDateEncodingStrategy(.secondsSince1970) { try await garage.park(Dated(id: 1, date: parityDate)) }
            return try await garage.withDateDecodingStrategy(.secondsSince1970) { try await garage.retrieve(Dated.self, identifier: 1)?.date }
        }),
        Operation("@Persisted", sync: { garage in
            let persister = Persisted(paritySetting, in: garage, defaultPersistence: .persistWhenNil).projectedValue
            let first = try persister.retrieve()
            try persister.persist(first + 10)
            return "\(first) \(try persister.retrieve()) \(try persister.remove()) \(try persister.retrieve())"
        }, async: { garage in
            let persister = Persisted(paritySetting, in: garage, defaultPersistence: .persistWhenNil).projectedValue
            let first = try await persister.retrieve()
            try await persister.persist(first + 10)
            return "\(first) \(try await persister.retrieve()) \(try await persister.remove()) \(try await persister.retrieve())"
        }),
        Operation("rollbackTransaction", sync: { garage in
            try garage.beginTransaction()
            try garage.park(Counter(id: 9, value: 9))
            try garage.rollbackTransaction()
            return try garage.count(Counter.self)
        }, async: { garage in
            try garage.beginTransaction()
            try await garage.park(Counter(id: 9, value: 9))
            try garage.rollbackTransaction()
            return try await garage.count(Counter.self)
        }),
    ]

    /// `records` as another store would export them: their identifiers changed, so that they are new.
    static func importable(_ records: [ObjectRecord]) -> [ObjectRecord] {
        records.map { record in
            var copy = record
            copy.identifier = "imported-" + record.identifier
            return copy
        }
    }

    @Test(arguments: Scenario.allCases, operations)
    func sameResultsAndRows(_ scenario: Scenario, _ operation: Operation) async throws {
        let directory = try TemporaryDirectory()
        let syncGarage = try Self.makeStore(scenario, at: directory.path("sync.sqlite"))
        let asyncGarage = try Self.makeStore(scenario, at: directory.path("async.sqlite"))

        let syncResult = Result { try operation.sync(syncGarage) }
        let asyncResult: Result<String, any Error>
        do {
            asyncResult = .success(try await operation.async(asyncGarage))
        } catch {
            asyncResult = .failure(error)
        }
        #expect(Self.describe(syncResult) == Self.describe(asyncResult))
        #expect(try Self.rows(directory.path("sync.sqlite"), syncGarage) == Self.rows(directory.path("async.sqlite"), asyncGarage))
        #expect(syncGarage.hasUnsavedChanges == asyncGarage.hasUnsavedChanges)
    }

    // MARK: - Stores

    static func makeStore(_ scenario: Scenario, at path: String) throws -> Garage {
        let garage = try TestEngine.garage(path: path)
        if scenario == .encryptedWithoutKey {
            garage.dataEncryptionDelegate = TestEncryptor()
        }
        var synced = max
        synced.syncStatus = .synced
        // Book 2 first: the claim takes the oldest change, the same row in every store.
        try garage.park(Book(id: 2, title: "Two", author: sam))
        try garage.park(Book(id: 1, title: "One", author: sam, coAuthors: [synced]))
        try garage.parkAll([Counter(id: 1, value: 1), Counter(id: 2, value: 2)])
        try garage.park(Note(text: "hashable", tags: ["a"]))
        #expect(try garage.claim(Book.self, limit: 1).identifiers == ["2"])
        try garage.park(Author(id: UUID(uuidString: "00000000-0000-0000-0000-000000000003")!, name: "Orphan"))
        garage.dataEncryptionDelegate = nil

        switch scenario {
        case .good, .encryptedWithoutKey:
            break
        case .damaged:
            try TestEngine.damage(garage, path: path, invalidJSON: ObjectKey(typeName: "Book", identifier: "2"),
                                textDate: ObjectKey(typeName: "Author", identifier: max.id.uuidString))
        case .unsaved:
            garage.isAutosaveEnabled = false
            try garage.park(Counter(id: 5, value: 5))
            try garage.delete(Counter(id: 2, value: 2))
            try garage.park(Book(id: 3, title: "Three", author: max))
        }
        return garage
    }

    /// The rows of a store, without the dates (which differ between two stores made one after
    /// the other) and the claims' random identifiers.
    static func rows(_ path: String, _ used: Garage) throws -> [String] {
        // Read by a garage without a delegate: an encrypted row's record holds its ciphertext.
        // One record at a time: a row that can't be read (the damaged store's) is described by
        // its error, and the walk goes on after it.
        // A store locked with a key is read by the garage that locked it (its records decrypted).
        let garage = (try? TestEngine.garage(path: path)) ?? used
        var rows: [String] = []
        var last: ObjectKey?
        while true {
            do {
                guard let record = try garage.records(after: last, limit: 1).first else { return rows }
                rows += describe([record])
                last = ObjectKey(typeName: record.typeName, identifier: record.identifier)
            } catch GarageError.corruptData(let typeName, let identifier, let reason) {
                rows.append("\(typeName)|\(identifier)|unreadable: \(reason)")
                last = ObjectKey(typeName: typeName, identifier: identifier)
            }
        }
    }

    // MARK: - Descriptions that don't depend on dates or random identifiers

    static func describe(_ result: Result<String, any Error>) -> String {
        switch result {
        case .success(let value): return "returned \(value)"
        case .failure(let error): return "threw \(String(reflecting: error))"
        }
    }

    static func describe(_ records: [ObjectRecord]) -> [String] {
        records.map { record in
            [record.typeName, record.identifier, record.isEncrypted ? "encrypted" : record.json, "\(record.syncStatus)",
             String(record.revision), String(record.isRoot), record.references.map(\.description).joined(separator: ","),
             "deleted \(record.isDeleted)", "remote \(record.isRemote)", "claimed \(record.claimDate != nil)",
             "attempts \(record.attempts)", record.lastError ?? "-", "held \(record.retryDate != nil)"].joined(separator: "|")
        }
    }

    static func describe(_ statistics: StoreStatistics) -> String {
        // Without the dates and sizes, which differ between two stores made one after the other.
        statistics.types.map { type in
            "\(type.typeName): \(type.count) \(type.countsByStatus.sorted { $0.key.rawValue < $1.key.rawValue }) "
                + "claims \(type.openClaims) held \(type.heldObjects) tombstones \(type.tombstones) "
                + "unsynced \(type.oldestUnsyncedChange != nil) encrypted \(type.encryptedCount)"
        }.joined(separator: "; ") + " encrypted \(statistics.isEncrypted) format \(statistics.formatVersion)"
    }

    static func describe(_ held: HeldObject) -> String {
        "\(held.identifier) \(held.attempts) \(held.lastError ?? "-")"
    }

    static func describe(_ report: ClaimReport) -> String {
        "synced \(report.synced) notSynced \(report.notSynced) kept \(report.keptByApp) failed \(report.failedUploads) "
            + "deleted \(report.deleted) lost \(report.lost)"
    }

    static func describe(_ book: Book) -> String {
        "\(book.id) \(book.title) by \(book.author.name) with \(book.coAuthors.map(\.name)) \(book.syncStatus)"
    }

    static func describe(_ result: LossyRetrieval<Book>) -> String {
        "\(result.objects.map(describe)) failed \(result.failures.map { "\($0.identifier): \($0.error)" })"
    }

    static func describe(_ metadata: ObjectMetadata?) -> String {
        guard let metadata else { return "nil" }
        return "\(metadata.typeName) \(metadata.identifier) r\(metadata.revision) \(metadata.syncStatus) "
            + "root \(metadata.isRoot) claimed \(metadata.claimDate != nil)"
    }

    static func describe<T>(_ claim: Claim<T>) -> String {
        "\(claim.identifiers) failed \(claim.failures.map { "\($0.identifier): \($0.error)" })"
    }

    static func sorted(_ counts: [String: [SyncStatus: Int]]) -> String {
        counts.keys.sorted().map { type in
            "\(type): " + counts[type]!.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }.joined(separator: "; ")
    }
}

/// `Counter`, renamed.
struct Tally: Codable, Identifiable, Sendable {
    var id: Int
    var value: Int
}

// The golden files' `FixtureV1.Tally` is stored as "Tally": in one process, this one needs a
// name of its own.
extension Tally: StoredTypeNamed {
    static let storedTypeName = "Parity.Tally"
}

/// A failed upload's error.
struct ParityFailure: Error, CustomStringConvertible {
    var description: String { "the server refused it" }
}

/// An object with a date, for the date strategies.
struct Dated: Codable, Identifiable, Sendable {
    var id: Int
    var date: Date
}

let parityDate = Date(timeIntervalSince1970: 1_000_000)

/// The settings the parity tests set.
enum ParitySettings: SettingsNamespace {
    static let id = "parity"
}

let paritySetting = SettingsKey<ParitySettings, Int>(id: "count", defaultValue: 1)
let parityLegacySetting = SettingsKey<ParitySettings, String>(id: "legacyCount", defaultValue: "")

/// The key of the parity tests' encryption.
let parityKey = SymmetricKey(data: Data(repeating: 7, count: 32))
let parityKey2 = SymmetricKey(data: Data(repeating: 8, count: 32))
let parityStoreKey = StoreKey.passphrase("parity", rounds: StoreKey.minimumRounds)
let parityStoreKey2 = StoreKey.passphrase("parity 2", rounds: StoreKey.minimumRounds)

/// The result of a rewrite, with a decryption failure told by the object it names only: over
/// another cipher's random ciphertexts, its reason depends on their bytes (a first byte of 1
/// reads as an envelope of an unknown key).
func decryptionOutcome(_ body: () throws -> Int) throws -> String {
    do {
        return String(try body())
    } catch GarageError.decryptionFailed(let type, let identifier, _) {
        return "decryptionFailed \(type)(\(identifier))"
    }
}

func decryptionOutcome(_ body: () async throws -> Int) async throws -> String {
    do {
        return String(try await body())
    } catch GarageError.decryptionFailed(let type, let identifier, _) {
        return "decryptionFailed \(type)(\(identifier))"
    }
}
