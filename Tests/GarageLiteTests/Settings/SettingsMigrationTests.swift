import Foundation
import Testing
@testable import GarageLite

enum STCity: String, Codable, Sendable {
    case paris, tokyo
}

enum STTravel: SettingsNamespace {
    static let id = "travel"
    static let city = SettingsKey<STTravel, STCity?>(id: "city", defaultValue: nil)
}

/// Issue 13, legacy keys: a value moved, converted, once.
@Suite("Settings: legacy-key migration")
struct SettingsMigrationTests {
    /// Storez's example: an old string becomes a city, once.
    @Test func aLegacyValueMovesOnceConverted() throws {
        let garage = try TestEngine.garage()
        try garage.set("Paris", for: SettingsKey<GlobalSettings, String>(id: "OldCityKey", defaultValue: ""))
        let migration = SettingsMigration(to: STTravel.city, from: "OldCityKey", as: String.self) {
            STCity(rawValue: $0.lowercased())
        }
        #expect(try garage.migrate([migration]) == [.moved(from: "OldCityKey", to: "travel:city")])
        #expect(try garage.value(for: STTravel.city) == .paris)
        #expect(try garage.count() == 1)                                 // the old row is gone

        // Again: nothing to move, and the value stays.
        #expect(try garage.migrate([migration]) == [])
        #expect(try garage.value(for: STTravel.city) == .paris)
    }

    @Test func theNewKeysValueWinsAndTheOldOneGoes() throws {
        let garage = try TestEngine.garage()
        try garage.set("Paris", for: SettingsKey<GlobalSettings, String>(id: "OldCityKey", defaultValue: ""))
        try garage.set(.tokyo, for: STTravel.city)
        let converted = STCounter()
        let migration = SettingsMigration(to: STTravel.city, from: "OldCityKey", as: String.self) { old in
            _ = converted.next()
            return STCity(rawValue: old.lowercased())
        }
        #expect(try garage.migrate([migration]) == [.discarded(from: "OldCityKey", to: "travel:city")])
        #expect(try garage.value(for: STTravel.city) == .tokyo)
        #expect(converted.value == 0)
        #expect(try garage.count() == 1)
    }

    @Test func migrationsRunInOrderInOneTransaction() throws {
        let garage = try TestEngine.garage()
        let a = SettingsKey<GlobalSettings, Int>(id: "a", defaultValue: 0)
        let b = SettingsKey<GlobalSettings, String>(id: "b", defaultValue: "")
        let c = SettingsKey<STCats, Double>(id: "c", defaultValue: 0)
        try garage.set(5, for: a)
        let chain = [
            SettingsMigration(to: b, from: a) { "\($0 * 2)" },
            SettingsMigration(to: c, from: b) { Double($0)! },
        ]
        #expect(try garage.migrate(chain) == [.moved(from: "a", to: "b"), .moved(from: "b", to: "animals:cats:c")])
        #expect(try garage.value(for: c) == 10)
        #expect(try garage.count() == 1)

        // A conversion that throws moves nothing, not even what the migrations before it moved.
        struct Refused: Error {}
        try garage.set(1, for: a)
        try garage.set("x", for: SettingsKey<GlobalSettings, String>(id: "legacy", defaultValue: ""))
        let failing = [
            SettingsMigration(to: b, from: a) { "\($0)" },
            SettingsMigration(to: SettingsKey<GlobalSettings, Int>(id: "new", defaultValue: 0), from: "legacy", as: String.self) { _ in
                throw Refused()
            },
        ]
        #expect(throws: Refused.self) { try garage.migrate(failing) }
        #expect(try garage.value(for: a) == 1)
        #expect(try garage.value(for: b) == "")
        #expect(try garage.count() == 3)
    }

    @Test func aMigrationThroughTransformersAndItsErrors() async throws {
        let garage = try TestEngine.garage()
        // The old key stored a theme as its raw value; the new one stores the name as JSON.
        let old = SettingsKey<GlobalSettings, STTheme>(id: "old-theme", defaultValue: .light, transformer: RawRepresentableTransformer())
        let new = SettingsKey<STCats, String>(id: "theme", defaultValue: "", transformer: JSONTransformer()) { $0.uppercased() }
        try await garage.set(.dark, for: old)
        let migration = SettingsMigration(to: new, from: old) { "\($0)" }
        #expect(try await garage.migrate([migration]) == [.moved(from: "old-theme", to: "animals:cats:theme")])
        #expect(try await garage.value(for: new) == "DARK")               // through the new key's transform
        #expect(try await garage.migrate([migration]) == [])

        // An old value that isn't the old type names the old key.
        try await garage.set([1, 2], for: SettingsKey<GlobalSettings, [Int]>(id: "OldCityKey", defaultValue: []))
        let city = SettingsMigration(to: STTravel.city, from: "OldCityKey", as: String.self) { STCity(rawValue: $0) }
        let error = try #require(throws: SettingsError.self) { try garage.migrate([city]) }
        guard case .valueMismatch(key: "OldCityKey", valueType: "String", _) = error else {
            Issue.record("expected valueMismatch, got \(error)")
            return
        }
        await #expect(throws: error) { try await garage.migrate([city]) }

        // A value can't move onto its own key.
        let ontoItself = SettingsMigration(to: STTravel.city, from: "travel:city", as: String.self) { STCity(rawValue: $0) }
        #expect(throws: SettingsError.migrationOntoItself(key: "travel:city")) { try garage.migrate([ontoItself]) }
    }

    /// Migrations run no hooks: they move stored data.
    @Test func aMigrationRunsNoHooks() throws {
        let garage = try TestEngine.garage()
        try garage.set(3, for: SettingsKey<GlobalSettings, Int>(id: "old", defaultValue: 0))
        let log = STHookLog(refusing: ["hooked:child:new"])
        let migration = SettingsMigration(
            to: SettingsKey<STHookedChild, Int>(id: "new", defaultValue: 0), from: "old", as: Int.self) { $0 + 1 }
        let outcomes = try STHookLog.$current.withValue(log) { try garage.migrate([migration]) }
        #expect(outcomes.count == 1)
        #expect(log.recorded.isEmpty)
        #expect(try garage.value(for: SettingsKey<STHookedChild, Int>(id: "new", defaultValue: 0)) == 4)
    }
}
