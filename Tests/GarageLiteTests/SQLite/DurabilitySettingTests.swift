@testable import GarageLite
import Foundation
import Testing

// The durability setting: what an acknowledged commit survives. The power-cut tests
// (PowerCutTests, on the fault-injecting file system) prove what each setting keeps; these
// check that the setting reaches SQLite's writer and is not stored with the file.
@Suite(.firstPassOnly) struct DurabilitySettingTests {
    private struct DurableMemo: Codable, Identifiable, Equatable {
        var id: String
        var text: String
    }

    @Test func theDefaultSyncsTheLogAtCheckpoints() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("garage.sqlite"))
        #expect(try garage.store.synchronousSetting() == 1) // NORMAL
        let engine = try Garage(engine: .sqlite(path: directory.path("other.sqlite")))
        #expect(try engine.store.synchronousSetting() == 1)
    }

    @Test func fullSyncsEveryCommitAndIsChosenAtEachOpening() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        do {
            let garage = try Garage(engine: .sqlite(path: path, durability: .full))
            #expect(try garage.store.synchronousSetting() == 2) // FULL
            try garage.park(DurableMemo(id: "a", text: "kept"))
            try garage.transaction { try garage.park(DurableMemo(id: "b", text: "also kept")) }
            #expect(try garage.retrieveAll(DurableMemo.self).map(\.id) == ["a", "b"])
        }
        // The setting is the opener's, not the file's.
        let reopened = try Garage(path: path)
        #expect(try reopened.store.synchronousSetting() == 1)
        #expect(try reopened.retrieve(DurableMemo.self, identifier: "b") == DurableMemo(id: "b", text: "also kept"))
        let full = try Garage(engine: .sqlite(path: path, durability: .full))
        #expect(try full.store.synchronousSetting() == 2)
        #expect(try reopened.store.synchronousSetting() == 1)
    }
}
