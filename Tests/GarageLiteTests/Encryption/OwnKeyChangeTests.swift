import Foundation
@testable import GarageLite
import Testing

/// Issue 24, item 7: a garage's own operations join its own key changes. While `rekey(to:)`
/// runs, the garage's parks on other threads and tasks are written (with the new key), not
/// refused as if another process had rotated the key; and a rotation or a decryption stopped
/// part-way by a storage failure says which key now opens the store, and that calling again
/// finishes it.
@Suite("Encryption: a garage's own key changes")
struct OwnKeyChangeTests {
    static func passphrase(_ text: String) -> StoreKey { .passphrase(text, rounds: StoreKey.minimumRounds) }

    /// What the parks of one rotation did.
    struct Parks: Sendable {
        var parked: [String] = []
        var failures: [String] = []
    }

    /// Four rotations of ~1,500 rows on this thread, each with parks of a struct and of a class
    /// (with nested structs) on another thread for as long as it runs: none fails, and every
    /// object parked reads with the last key.
    @Test(.timeLimit(.minutes(3)))
    func parksOnAnotherThreadDuringARekeyAreWrittenWithTheNewKey() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("key 0"))
        try garage.parkAll((0..<1_500).map { SKNote(id: "n\($0)", text: "text \($0)") })
        var expected = 1_500
        for rotation in 1...4 {
            let running = Protected(true)
            let parks = Protected(Parks())
            let started = DispatchSemaphore(value: 0)
            let ended = DispatchSemaphore(value: 0)
            Thread {
                var index = 0
                while running.read({ $0 }) || index < 2 {
                    let id = "r\(rotation)-\(index)"
                    do {
                        if index.isMultiple(of: 2) {
                            try garage.park(SKNote(id: id, text: "during rotation \(rotation)"))
                        } else {
                            try garage.park(SKFolder(id: id, title: "folder", notes: [SKNote(id: id + "-note", text: "nested")]))
                        }
                        parks.write { $0.parked.append(id) }
                    } catch {
                        parks.write { $0.failures.append("\(id): \(error)") }
                    }
                    if index == 1 { started.signal() }
                    index += 1
                }
                ended.signal()
            }.start()
            started.wait()     // parks are under way before the rotation begins
            let rewritten = try garage.rekey(to: Self.passphrase("key \(rotation)"))
            running.write { $0 = false }
            ended.wait()
            let done = parks.read { $0 }
            #expect(done.failures.isEmpty, "rotation \(rotation): \(done.failures.prefix(3))")
            #expect(rewritten >= 1_500)           // the first objects; those parked meanwhile may be on the new key
            expected += done.parked.count         // one note each, alone or in its folder
            #expect(try garage.encryptionStatus().keyIDs.count == 1)
        }
        try expectEveryObjectReads(path: path, key: Self.passphrase("key 4"), notes: expected)
    }

    /// The same with `async` rotations and parks, in tasks.
    @Test(.timeLimit(.minutes(3)))
    func asyncParksDuringAnAsyncRekeyAreWrittenWithTheNewKey() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try TestEngine.garage(path: path, encryptionKey: Self.passphrase("key 0"))
        try await garage.parkAll((0..<1_500).map { SKNote(id: "n\($0)", text: "text \($0)") })
        var parkedNotes = 0
        for rotation in 1...4 {
            let running = Protected(true)
            let (started, reportStarted) = AsyncStream<Void>.makeStream()
            let parker = Task { () -> Parks in
                var parks = Parks()
                var index = 0
                while running.read({ $0 }) || index < 2 {
                    let id = "r\(rotation)-\(index)"
                    do {
                        if index.isMultiple(of: 2) {
                            try await garage.park(SKNote(id: id, text: "during rotation \(rotation)"))
                        } else {
                            try await garage.park(SKFolder(id: id, title: "folder", notes: [SKNote(id: id + "-note", text: "nested")]))
                        }
                        parks.parked.append(id)
                    } catch {
                        parks.failures.append("\(id): \(error)")
                    }
                    if index == 1 { reportStarted.yield() }
                    index += 1
                }
                return parks
            }
            var iterator = started.makeAsyncIterator()
            _ = await iterator.next()
            try await garage.rekey(to: Self.passphrase("key \(rotation)"))
            running.write { $0 = false }
            let parks = await parker.value
            #expect(parks.failures.isEmpty, "rotation \(rotation): \(parks.failures.prefix(3))")
            #expect(try await garage.encryptionStatus().keyIDs.count == 1)
            parkedNotes += parks.parked.count     // one note each, alone or in its folder
        }
        try expectEveryObjectReads(path: path, key: Self.passphrase("key 4"), notes: 1_500 + parkedNotes)
    }

    /// Every object of the store reads with `key` in a garage opened afresh: `notes` notes
    /// (the folders' nested notes included), and every folder with its note.
    func expectEveryObjectReads(path: String, key: StoreKey, notes: Int) throws {
        let garage = try TestEngine.garage(path: path, encryptionKey: key)
        #expect(try garage.retrieveAll(SKNote.self).count == notes)
        let folders = try garage.retrieveAll(SKFolder.self)
        #expect(folders.allSatisfy { $0.notes.first?.id == $0.id + "-note" })
        #expect(try garage.check().isOK)
    }
}

/// A rotation asked for while changes are unsaved is refused before it switches the key:
/// those changes, sealed with the old key, could never be saved after it (issue 24).
@Suite("A rotation with unsaved changes")
struct RotationWithUnsavedChangesTests {
    @Test func isRefusedBeforeTheKeySwitches() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("locked.garage")
        let old = StoreKey.passphrase("old", rounds: StoreKey.minimumRounds)
        let new = StoreKey.passphrase("new", rounds: StoreKey.minimumRounds)
        let garage = try TestEngine.garage(path: path, encryptionKey: old)
        try garage.park(RNote(id: "n1", text: "Milk"))
        garage.isAutosaveEnabled = false
        try garage.park(RNote(id: "n2", text: "Eggs"))
        #expect(throws: GarageError.self) { try garage.rekey(to: new) }
        // Nothing switched: the unsaved change saves, and the old key still opens the store.
        try garage.save()
        #expect(try TestEngine.garage(path: path, encryptionKey: old).retrieve(RNote.self, identifier: "n2")?.text == "Eggs")
        try garage.rekey(to: new)
        #expect(try TestEngine.garage(path: path, encryptionKey: new).retrieve(RNote.self, identifier: "n2")?.text == "Eggs")
    }

    @Test func isRefusedBeforeTheKeySwitchesAsync() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("locked.garage")
        let old = StoreKey.passphrase("old", rounds: StoreKey.minimumRounds)
        let garage = try TestEngine.garage(path: path, encryptionKey: old)
        garage.isAutosaveEnabled = false
        try await garage.park(RNote(id: "n2", text: "Eggs"))
        await #expect(throws: GarageError.self) { try await garage.rekey(to: .passphrase("new", rounds: StoreKey.minimumRounds)) }
        try await garage.save()
        #expect(try await TestEngine.garage(path: path, encryptionKey: old).retrieve(RNote.self, identifier: "n2")?.text == "Eggs")
    }
}
