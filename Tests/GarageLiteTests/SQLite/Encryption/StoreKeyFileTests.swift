import Crypto
import Foundation
@testable import GarageLite
import Testing

/// Issue 14, SQLite's side: a store locked with a key, as SQLite's files, its read-only garages
/// and its triggers see it (`StoreKeyTests` holds the engine-neutral behaviour, on both engines).
@Suite("Encryption: the store's key in SQLite's files", .firstPassOnly)
struct StoreKeyFileTests {
    static func passphrase(_ text: String) -> StoreKey { StoreKeyTests.passphrase(text) }

    /// Whether `error` says the garage's key of the store at `path` is stale.
    func isStale(_ error: any Error, _ path: String) -> Bool {
        if case GarageError.staleEncryptionKey(path, _) = error { return true }
        return false
    }

    /// The data of every committed row of `garage`'s store (tombstones too), as stored: by identifier.
    func storedData(_ garage: Garage) throws -> [String: String] {
        try StoreKeyTests().storedData(garage)
    }

    /// A read-only garage needs the key as a garage that writes does, and reads with it.
    @Test func aReadOnlyGarageOfALockedStoreNeedsItsKey() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        do {
            let garage = try Garage(path: path, encryptionKey: Self.passphrase("open sesame"))
            try garage.park(SKNote(id: "n1", text: "Note-Marker"))
        }
        #expect(throws: GarageError.encryptionKeyRequired(path: path)) { try Garage.readOnly(path: path) }
        let reader = try Garage.readOnly(path: path, encryptionKey: Self.passphrase("open sesame"))
        #expect(try reader.retrieve(SKNote.self, identifier: "n1")?.text == "Note-Marker")
    }

    /// Parks, re-parks, deletes, `deleteAll`, garbage collection, a setting and a rotation in a
    /// locked store: none of the objects' content ever reaches the three files.
    @Test func noPlaintextReachesTheFilesWhateverTheStoreDoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let garage = try Garage(path: path, encryptionKey: Self.passphrase("pw"))
        func expectNoMarker(_ step: String) {
            let bytes = storeFileBytes(path)
            for marker in ["Marker-A", "Marker-B", "Marker-C", "Marker-D", "Setting-Marker"] {
                #expect(bytes.range(of: Data(marker.utf8)) == nil, "\(marker) is in the files after \(step)")
            }
        }
        try garage.parkAll((0..<300).map { SKNote(id: "n\($0)", text: "Marker-A \($0)") })
        expectNoMarker("parks")
        try garage.parkAll((0..<300).map { SKNote(id: "n\($0)", text: "Marker-B \($0)") })
        expectNoMarker("re-parks")
        try garage.park(SKFolder(id: "f", title: "Marker-C", notes: [SKNote(id: "child", text: "Marker-D")]))
        try garage.park(SKFolder(id: "f", title: "Marker-C", notes: []))        // the child is now unreachable
        _ = try garage.collectGarbage(dryRun: false)
        expectNoMarker("garbage collection")
        try garage.set("Setting-Marker", for: SettingsKey<GlobalSettings, String>(id: "secret", defaultValue: ""))
        for index in 0..<100 { try garage.delete(SKNote.self, identifier: "n\(index)") }
        _ = try garage.deleteAll(SKNote.self)
        expectNoMarker("deletes and deleteAll")
        try garage.rekey(to: Self.passphrase("pw2"))
        expectNoMarker("rekey")
        #expect(try garage.value(for: SettingsKey<GlobalSettings, String>(id: "secret", defaultValue: "")) == "Setting-Marker")
    }
}
