import Foundation
import Testing
import GarageLite

/// Issue 25: a garage opens on an engine given to it; SQLite is the default, and the two ways
/// of opening it are the same store.
@Suite("Opening a garage on an engine", .firstPassOnly)
struct GarageEngineTests {
    struct EngineMemo: Codable, Identifiable, Sendable, Equatable {
        var id: String
        var text: String
    }

    @Test func aGarageOnTheSQLiteEngineIsTheStoreAtItsPath() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("engine.garage")
        let garage = try Garage(engine: .sqlite(path: path, busyTimeout: 5))
        try garage.park(EngineMemo(id: "m", text: "on the engine"))
        #expect(garage.path == path)
        #expect(try Garage(path: path).retrieve(EngineMemo.self, identifier: "m")?.text == "on the engine")
    }

    @Test func aGarageInMemoryStartsEmptyAndKeepsItsObjects() throws {
        let garage = try Garage(engine: .inMemory())
        #expect(try garage.count() == 0)
        try garage.park(EngineMemo(id: "m", text: "kept"))
        #expect(try garage.retrieve(EngineMemo.self, identifier: "m") == EngineMemo(id: "m", text: "kept"))
        #expect(garage.path == nil)
        #expect(try Garage(engine: .inMemory()).count() == 0)
    }

    @Test func anEncryptedStoreOpensOnTheEngineWithItsKey() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("locked.garage")
        let key = StoreKey.passphrase("engine", rounds: StoreKey.minimumRounds)
        try Garage(engine: .sqlite(path: path), encryptionKey: key).park(EngineMemo(id: "m", text: "secret"))
        #expect(throws: GarageError.self) { try Garage(engine: .sqlite(path: path)).retrieve(EngineMemo.self, identifier: "m") }
        #expect(try Garage(engine: .sqlite(path: path), encryptionKey: key).retrieve(EngineMemo.self, identifier: "m")?.text == "secret")
    }
}
