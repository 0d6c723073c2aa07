import Crypto
import Foundation
@testable import GarageLite
import GarageStressModels
import Testing

/// Issue 14: a re-encryption killed at any moment leaves a store that reads every object with
/// the keys it was given, and the next call finishes it.
@Suite("Re-encryption killed midway", .firstPassOnly)
struct ReencryptCrashTests {
    static let oldKey = SymmetricKey(data: Data(repeating: 11, count: 32))
    static let newKey = SymmetricKey(data: Data(repeating: 22, count: 32))

    @Test(.timeLimit(.minutes(5)))
    func aKilledReencryptionLeavesEveryObjectReadableAndTheNextCallFinishes() throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let count = 3_000
        var killedMidway = 0
        // Killed as soon as the worker has moved `progress` objects to the new key (a committed
        // batch or more), whatever the time that takes: in its batches, or in its compaction.
        for (round, progress) in [0, 1, 500, 2_000, 3_000].enumerated() {
            let directory = try TemporaryDirectory()
            let path = directory.path("store.garage")
            do {
                let garage = try Garage(path: path)
                garage.dataEncryptionDelegate = try AESGCMEncryptor(key: Self.oldKey, keyID: 1)
                try garage.parkAll((0..<count).map {
                    StressDocument(id: "d\($0)", version: $0, body: "round \(round) body \($0)", syncStatus: .notSynced)
                })
            }
            let process = try WorkerProcess(name: "reencrypt-\(round)", executable: worker,
                                            arguments: [path, "reencrypt", "11", "22"], directory: directory.url)
            // An envelope of key id 2 starts with the bytes 01 00 00 00 02: "AQAAAAI" in base64.
            let moved = try waitForObjects(movedTo: "AQAAAAI", atLeast: progress, in: path, while: process)
            process.kill()
            #expect(process.wait(timeout: 60))
            if process.wasKilled, moved > 0, moved < count { killedMidway += 1 }
            if !process.wasKilled { #expect(process.exitedCleanly, "\(process.outputText)") }

            let garage = try Garage(path: path)
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: Self.newKey, keyID: 2, previousKeys: [1: Self.oldKey])
            let documents = try garage.retrieveAll(StressDocument.self)
            #expect(documents.count == count && documents.allSatisfy { $0.body == "round \(round) body \($0.version)" })
            #expect(try garage.check().isOK)
            _ = try garage.reencryptObjects()
            garage.dataEncryptionDelegate = try AESGCMEncryptor(key: Self.newKey, keyID: 2)
            #expect(try garage.retrieveAll(StressDocument.self).count == count)
            #expect(try garage.reencryptObjects() == 0)
        }
        // The kills must have caught the worker with objects of both keys at least once for the test
        // to mean anything (rounds 2 and 3 kill it with a third or two thirds of them moved).
        #expect(killedMidway > 0, "no re-encryption was killed midway")
    }

    /// `rekey(to:)` killed at any moment: the store opens with the key it was being moved to
    /// once the first object moved (before, with the old one, whose status says so), reads every
    /// object, and a second `rekey(to:)` with the same key finishes the rotation.
    @Test(.timeLimit(.minutes(5)))
    func aKilledRekeyLeavesAStoreThatOpensWithTheNewKeyAndTheNextCallFinishes() throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let count = 3_000
        let old = StoreKey.passphrase("old passphrase", rounds: StoreKey.minimumRounds)
        let new = StoreKey.passphrase("new passphrase", rounds: StoreKey.minimumRounds)
        var killedMidway = 0
        for (round, progress) in [0, 1, 500, 2_000, 3_000].enumerated() {
            let directory = try TemporaryDirectory()
            let path = directory.path("store.garage")
            do {
                let garage = try Garage(path: path, encryptionKey: old)
                try garage.parkAll((0..<count).map {
                    StressDocument(id: "d\($0)", version: $0, body: "Rekey-Marker \(round) body \($0)", syncStatus: .notSynced)
                })
            }
            let process = try WorkerProcess(name: "rekey-\(round)", executable: worker,
                                            arguments: [path, "rekey", "old passphrase", "new passphrase"], directory: directory.url)
            let moved = try waitForObjects(movedTo: "AQAAAAI", atLeast: progress, in: path, while: process)
            process.kill()
            #expect(process.wait(timeout: 60))
            if process.wasKilled, moved > 0, moved < count { killedMidway += 1 }
            if !process.wasKilled { #expect(process.exitedCleanly, "\(process.outputText)") }

            // The new key opens it once an object moved; before, either key may (the switch of
            // the key record is one commit), and the status tells which data keys are in use.
            let garage: Garage
            do {
                garage = try Garage(path: path, encryptionKey: new)
            } catch GarageError.wrongEncryptionKey {
                #expect(moved == 0, "the store refuses the new key after objects moved to it")
                garage = try Garage(path: path, encryptionKey: old)
                #expect(try garage.encryptionStatus().keyIDs == [1])
            }
            let documents = try garage.retrieveAll(StressDocument.self)
            #expect(documents.count == count && documents.allSatisfy { $0.body == "Rekey-Marker \(round) body \($0.version)" })
            #expect(try garage.check().isOK)
            _ = try garage.rekey(to: new)
            let status = try garage.encryptionStatus()
            #expect(!status.isUnfinished && status.keyIDs.count == 1)
            #expect(try Garage(path: path, encryptionKey: new).retrieveAll(StressDocument.self).count == count)
            #expect(storeFileBytes(path).range(of: Data("Rekey-Marker".utf8)) == nil)
        }
        #expect(killedMidway > 0, "no rekey was killed midway")
    }

    /// Waits until `atLeast` rows hold an envelope whose base64 starts with `prefix`, or the
    /// process ends; returns how many did.
    private func waitForObjects(movedTo prefix: String, atLeast progress: Int, in path: String,
                                while process: WorkerProcess) throws -> Int {
        guard progress > 0 else { return 0 }
        var moved = 0
        while moved < progress, !process.wait(timeout: 0) {
            do {
                moved = try SQLiteFile(path, busyTimeout: 30, readOnly: true)
                    .int("SELECT COUNT(*) FROM garage_object WHERE data LIKE ?", [prefix + "%"]) ?? 0
            } catch where SQLiteFile.isBusy(error) {
                continue // the worker holds the file (its compaction): look again
            }
        }
        return moved
    }
}
