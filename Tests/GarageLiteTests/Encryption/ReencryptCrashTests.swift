import Crypto
import Foundation
import GRDB
@testable import GarageLite
import GarageStressModels
import Testing

/// Issue 14: a re-encryption killed at any moment leaves a store that reads every object with
/// the keys it was given, and the next call finishes it.
@Suite("Re-encryption killed midway")
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
            var moved = 0
            if progress > 0 {
                var configuration = Configuration()
                configuration.readonly = true
                configuration.busyMode = .timeout(30)
                // An envelope of key id 2 starts with the bytes 01 00 00 00 02: "AQAAAAI" in base64.
                while moved < progress, !process.wait(timeout: 0) {
                    do {
                        moved = try DatabaseQueue(path: path, configuration: configuration).read { db in
                            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM garage_object WHERE data LIKE 'AQAAAAI%'") ?? 0
                        }
                    } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
                        continue // the worker holds the file (its compaction): look again
                    }
                }
            }
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
}
