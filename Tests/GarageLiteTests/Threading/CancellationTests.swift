import Foundation
import Testing
@testable import GarageLite

/// Issue 25: an `async` operation cancelled before its write commits writes nothing and
/// throws `CancellationError`; long work stops between batches, leaving a consistent store
/// that the next call finishes.
///
/// No test waits on the clock: an operation runs in a task cancelled before it starts, or one
/// that user code (an `encode(to:)`, the encryption delegate) cancels at a chosen object.
@Suite("Cancellation of async operations")
struct CancellationTests {
    struct Piece: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var value: Int
    }

    /// The operations a cancelled task makes, each given a garage holding `seeded()`.
    enum Operation: String, CaseIterable, Sendable {
        case park, parkAll, delete, deleteAll, transaction, claim, collectGarbage,
             importRecords, importGarageStorageStore, setSetting, updateSetting, deleteAllObjects, migrateAll, rekey,
             changeEncryptionKey
    }

    private static let passphrase = StoreKey.passphrase("cancel", rounds: 210_000)
    private static let volume = SettingsKey<GlobalSettings, Int>(id: "volume", defaultValue: 1)

    /// Runs `body` in a task cancelled before it starts; returns its outcome.
    private static func inCancelledTask<T: Sendable>(
        _ body: @escaping @Sendable () async throws -> T
    ) async -> Result<T, any Error> {
        let task = Task { () async throws -> T in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await body()
        }
        return await task.result
    }

    /// What a store holds, read through the record API: every row's content and state.
    private static func snapshot(_ garage: Garage) throws -> [String] {
        try garage.records(limit: 10_000).map {
            "\($0.typeName) \($0.identifier) \($0.syncStatus) r\($0.revision) deleted:\($0.isDeleted) \($0.isEncrypted ? "sealed" : $0.json)"
        }
    }

    @Test(arguments: Operation.allCases)
    func aCancelledTaskWritesNothing(_ operation: Operation) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("cancel.garage")
        let encrypted = operation == .rekey || operation == .changeEncryptionKey
        let garage = try TestEngine.garage(path: path, encryptionKey: encrypted ? Self.passphrase : nil)
        try await garage.parkAll((0..<20).map { Piece(id: "i\($0)", value: $0) })
        try await garage.set(5, for: Self.volume)
        _ = try await garage.claim(Piece.self, limit: 3)
        let before = try Self.snapshot(garage)

        let outcome = await Self.inCancelledTask { () async throws -> Void in
            switch operation {
            case .park: try await garage.park(Piece(id: "new", value: 1))
            case .parkAll: try await garage.parkAll((0..<5).map { Piece(id: "n\($0)", value: $0) })
            case .delete: _ = try await garage.delete(Piece.self, identifier: "i10")
            case .deleteAll: _ = try await garage.deleteAll(Piece.self)
            case .transaction:
                try await garage.transaction {
                    try await garage.park(Piece(id: "t", value: 1))
                    _ = try await garage.delete(Piece.self, identifier: "i11")
                }
            case .claim: _ = try await garage.claim(Piece.self, limit: 5)
            case .collectGarbage: _ = try await garage.collectGarbage(dryRun: false)
            case .importRecords:
                var record = try await #require(try garage.records(ofType: try garage.storedTypeName(Piece.self), limit: 1).first)
                record.identifier = "imported"
                _ = try await garage.importRecords([record])
            case .importGarageStorageStore:
                _ = try await garage.importGarageStorageStore(at: SyncAsyncParityTests.garageStorageStore)
            case .setSetting: try await garage.set(9, for: Self.volume)
            case .updateSetting: _ = try await garage.updateValue(for: Self.volume) { $0 + 1 }
            case .deleteAllObjects: _ = try await garage.deleteAllObjects()
            case .migrateAll: _ = try await garage.migrateAll(fromOldClassName: try garage.storedTypeName(Piece.self), toTypeName: "Moved")
            case .rekey: _ = try await garage.rekey(to: .passphrase("new", rounds: 210_000))
            case .changeEncryptionKey: try await garage.changeEncryptionKey(to: .passphrase("new", rounds: 210_000))
            }
        }
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(try Self.snapshot(garage) == before)
        if encrypted {
            // Still locked with its key, which still opens it.
            await #expect(try TestEngine.garage(path: path, encryptionKey: Self.passphrase).count(Piece.self) == 20)
        }
    }

    /// A delegate that encrypts by base64 (enough for a test), and cancels `task` at its
    /// `cancelAt`-th call.
    final class CancellingDelegate: DataEncryptionDelegate {
        private let state = Protected((calls: 0, task: Task<Int, any Error>?.none))
        let cancelAt: Int

        init(cancelAt: Int) { self.cancelAt = cancelAt }

        func cancelling(_ task: Task<Int, any Error>) { state.write { $0.task = task } }

        private func count() {
            let task = state.write { state -> Task<Int, any Error>? in
                state.calls += 1
                return state.calls == cancelAt ? state.task : nil
            }
            task?.cancel()
        }

        func encrypt(_ data: Data) throws -> String {
            count()
            return "b64:" + data.base64EncodedString()
        }

        func decrypt(_ string: String) throws -> Data {
            count()
            guard string.hasPrefix("b64:"), let data = Data(base64Encoded: String(string.dropFirst(4))) else {
                throw GarageError.invalidEncryptionKey(reason: "not b64")
            }
            return data
        }
    }

    /// Starts `operation` in a task that `delegate` cancels, once it holds the task.
    private static func run(
        _ delegate: CancellingDelegate, _ operation: @escaping @Sendable () async throws -> Int
    ) async -> Result<Int, any Error> {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = Task { () async throws -> Int in
            for await _ in gate { break }
            return try await operation()
        }
        delegate.cancelling(task)
        open.yield()
        return await task.result
    }

    /// 1,200 objects are encrypted in batches of 500: cancelled at the 700th, the first batch
    /// stays encrypted, the second rolls back, and every object reads; the next call finishes.
    @Test func anEncryptionCancelledPartWayStopsBetweenBatches() async throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("encrypt.garage"))
        // Reads the rows as stored: without a delegate, a record holds the ciphertext.
        let inspector = try TestEngine.garage(path: directory.path("encrypt.garage"))
        try await garage.parkAll((0..<1_200).map { Piece(id: String(format: "i%04d", $0), value: $0) })
        let delegate = CancellingDelegate(cancelAt: 700)
        garage.dataEncryptionDelegate = delegate
        let outcome = await Self.run(delegate) { try await garage.encryptUnencryptedObjects() }
        #expect(throws: CancellationError.self) { try outcome.get() }
        let records = try await inspector.records(limit: 2_000)
        #expect(records.filter(\.isEncrypted).count == Garage.encryptionBatchSize)
        await #expect(try garage.retrieveAll(Piece.self).count == 1_200)
        #expect(try await garage.encryptUnencryptedObjects() == 1_200 - Garage.encryptionBatchSize)
        await #expect(try inspector.records(limit: 2_000).allSatisfy(\.isEncrypted))
    }

    /// The same for a decryption (reported as an unfinished key change): stopped part-way, every
    /// object reads with the delegate, and the next call finishes.
    @Test func aDecryptionCancelledPartWayStopsBetweenBatches() async throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("decrypt.garage"))
        let inspector = try TestEngine.garage(path: directory.path("decrypt.garage"))
        let delegate = CancellingDelegate(cancelAt: 1_200 + 700)  // after the 1,200 parks' encryptions
        garage.dataEncryptionDelegate = delegate
        try await garage.parkAll((0..<1_200).map { Piece(id: String(format: "i%04d", $0), value: $0) })
        let outcome = await Self.run(delegate) { try await garage.decryptAllObjects() }
        // A key change stopped part-way is said as such: which key opens the store, and to call again.
        #expect { try outcome.get() } throws: { error in
            guard case GarageError.keyChangeUnfinished = error else { return false }
            return true
        }
        await #expect(try inspector.records(limit: 2_000).filter { !$0.isEncrypted }.count == Garage.encryptionBatchSize)
        await #expect(try garage.retrieveAll(Piece.self).count == 1_200)
        #expect(try await garage.decryptAllObjects() == 1_200 - Garage.encryptionBatchSize)
        #expect(garage.dataEncryptionDelegate == nil)
        await #expect(try inspector.records(limit: 2_000).allSatisfy { !$0.isEncrypted })
    }

    /// A claim's end is not cancelled: the server has the upload, and the rows must say so.
    @Test func aCancelledTasksCompleteStillEndsTheClaim() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkAll((0..<3).map { Piece(id: "p\($0)", value: $0) })
        let claim = try await garage.claim(Piece.self, limit: 3, status: .undetermined)
        let outcome = await Self.inCancelledTask { try await garage.complete(claim) }
        #expect(try outcome.get().synced.count == 3)
        #expect(try await garage.count(Piece.self, withStatus: .synced) == 3)
    }

    /// An object whose encoding cancels the task that parks it.
    struct Cancelling: Encodable, Identifiable, Sendable {
        var id: Int
        var trigger: CancellingDelegate?

        func encode(to encoder: any Encoder) throws {
            if let trigger { _ = try trigger.encrypt(Data()) }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
        }

        enum CodingKeys: CodingKey { case id }
    }

    /// A streaming `parkAll` (3,000 objects) cancelled by the 1,500th object's encoding writes
    /// none of them: its one transaction rolls back.
    @Test func aStreamingParkAllCancelledPartWayWritesNothing() async throws {
        let garage = try TestEngine.garage()
        let trigger = CancellingDelegate(cancelAt: 1)
        let objects = (0..<3_000).map { Cancelling(id: $0, trigger: $0 == 1_500 ? trigger : nil) }
        #expect(objects.count >= Garage.streamingThreshold)
        let outcome = await Self.run(trigger) {
            try await garage.parkAll(objects)
            return 0
        }
        #expect(throws: CancellationError.self) { try outcome.get() }
        await #expect(try garage.count() == 0)
    }
}
