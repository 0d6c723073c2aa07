import Foundation
import Testing
@testable import GarageLite

/// A model whose properties are settings, as an app declares them.
final class STPlayerModel {
    static let volume = SettingsKey<STHookedChild, Double>(id: "volume", defaultValue: 0.5)

    @Persisted var volume: Double
    @Persisted var equalizer: String
    @Persisted var theme: STTheme

    init(garage: Garage, equalizerDefault: @escaping @Sendable () -> String = { "flat" }) {
        _volume = Persisted(Self.volume, in: garage)
        _equalizer = Persisted(wrappedValue: equalizerDefault(), id: "equalizer", in: garage)
        _theme = Persisted(id: "theme", in: garage, defaultValue: .light, transformer: RawRepresentableTransformer())
    }
}

/// Issue 13: `@Persisted` properties over settings, with lazy defaults, optionally persisted.
@Suite("Settings: @Persisted")
struct PersistedTests {
    @Test func aPersistedPropertyReadsAndWritesItsSetting() throws {
        let garage = try TestEngine.garage()
        let model = STPlayerModel(garage: garage)
        #expect(model.volume == 0.5)
        model.volume = 0.8
        #expect(model.volume == 0.8)
        #expect(try garage.value(for: STPlayerModel.volume) == 0.8)
        #expect(model.$volume.id == "hooked:child:volume")

        model.theme = .dark
        #expect(model.theme == .dark)
        #expect(try garage.value(for: SettingsKey<GlobalSettings, Int>(id: "theme", defaultValue: 0)) == 2)

        #expect(model.equalizer == "flat")
        try model.$equalizer.persist("rock")
        #expect(try model.$equalizer.retrieve() == "rock")
        #expect(try model.$equalizer.remove())
        #expect(model.equalizer == "flat")
        #expect(try !model.$equalizer.remove())
    }

    /// A getter can't throw: it returns the default. A setter drops the error; `persist` throws it.
    @Test func errorsAreTheDefaultInTheGetterAndThrownByTheProjectedValue() throws {
        let garage = try TestEngine.garage()
        let model = STPlayerModel(garage: garage)
        try garage.set("loud", for: SettingsKey<GlobalSettings, String>(id: "hooked:child:volume", defaultValue: ""))
        #expect(model.volume == 0.5)
        #expect(throws: SettingsError.self) { try model.$volume.retrieve() }

        try garage.removeValue(for: STPlayerModel.volume)
        STHookLog.$current.withValue(STHookLog(refusing: ["hooked:child:volume"])) {
            model.volume = 0.9                                            // refused: the error is dropped
            #expect(throws: STRefusal(key: "hooked:child:volume")) { try model.$volume.persist(0.9) }
        }
        #expect(model.volume == 0.5)
    }

    /// Persist's example: a random default, made lazily, stored the first time it is read.
    @Test func persistStyleDeclarationsOfAnOptionalAndOfATransformedValue() throws {
        let garage = try TestEngine.garage()
        let holder = STPersistStyle(garage: garage)
        #expect(holder.lastSearch == nil)
        holder.lastSearch = "lions"
        #expect(try garage.value(for: SettingsKey<GlobalSettings, String?>(id: "st-last-search", defaultValue: nil)) == "lions")
        #expect(holder.shade == .dark)
        holder.shade = .light
        // Stored as its raw value.
        #expect(try garage.value(for: SettingsKey<GlobalSettings, Int>(id: "st-shade", defaultValue: 0)) == 1)
        #expect(STPersistStyle(garage: garage).shade == .light)
    }

    @Test func aLazyRandomDefaultIsPersistedOnce() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("persisted.garage"))
        let made = STCounter()
        @Persisted(id: "seed", in: garage, defaultValue: made.next() * 1_000 + Int.random(in: 1...999), defaultPersistence: .persistWhenNil)
        var seed: Int
        #expect(made.value == 0)                                          // not made until needed
        #expect(try stStoredSetting(garage, "seed") == nil)

        let first = seed
        #expect(made.value == 1)
        #expect(try garage.value(for: SettingsKey<GlobalSettings, Int>(id: "seed", defaultValue: 0)) == first)
        #expect(seed == first)
        #expect(try $seed.retrieve() == first)
        #expect(made.value == 1)

        // Another wrapper, on another garage on the same file, reads the stored value: its own
        // default is never made.
        let other = try TestEngine.garage(path: directory.path("persisted.garage"))
        let otherMade = STCounter()
        @Persisted(id: "seed", in: other, defaultValue: otherMade.next(), defaultPersistence: .persistWhenNil)
        var otherSeed: Int
        #expect(otherSeed == first)
        #expect(otherMade.value == 0)

        // Removed, the value is the default again, stored again: the one made at first.
        #expect(try $seed.remove())
        #expect(seed == first)
        #expect(made.value == 1)
        #expect(try stStoredSetting(garage, "seed") != nil)
    }

    @Test func aDefaultThatIsNotPersistedIsMadeOnceAndNeverStored() throws {
        let garage = try TestEngine.garage()
        let made = STCounter()
        let model = STPlayerModel(garage: garage) { "preset \(made.next())" }
        #expect(made.value == 0)
        #expect(model.equalizer == "preset 1")
        #expect(model.equalizer == "preset 1")
        #expect(model.$equalizer.defaultValue == "preset 1")
        #expect(made.value == 1)
        #expect(try garage.count() == 0)
    }

    /// Two garages persisting a default at once store one: the first write wins, and both
    /// read it.
    @Test func aDefaultIsPersistedOnlyWhereNoneIsStored() async throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("first.garage"))
        let key = SettingsKey<GlobalSettings, String>(id: "install", defaultValue: "unused")
        let persister = Persisted(key, in: garage, defaultPersistence: .persistWhenNil).projectedValue
        // Stored meanwhile by someone else: the guarded write refuses, and the stored value is read.
        try await garage.set("theirs", for: key)
        #expect(try Self.setFirst("mine", persister, in: garage) == "theirs")
        #expect(try await garage.run(garage.settingFirst("mine", persister.setting)) == "theirs")
        #expect(try await garage.value(for: key) == "theirs")
        try await garage.removeValue(for: key)
        #expect(try await garage.run(garage.settingFirst("mine", persister.setting)) == "mine")
        #expect(try await persister.retrieve() == "mine")
    }

    private static func setFirst(_ value: String, _ persister: Persister<String>, in garage: Garage) throws -> String {
        try garage.run(garage.settingFirst(value, persister.setting))
    }

    @Test func theProjectedValuesAsyncVariants() async throws {
        let garage = try TestEngine.garage()
        @Persisted(id: "count", in: garage, defaultValue: 1, defaultPersistence: .persistWhenNil) var count: Int
        #expect(try await $count.retrieve() == 1)
        #expect(try await garage.value(for: SettingsKey<GlobalSettings, Int>(id: "count", defaultValue: 0)) == 1)
        try await $count.persist(2)
        #expect(count == 2)
        #expect(try await $count.remove())
        #expect(try await !$count.remove())
        #expect(try await $count.retrieve() == 1)
        #expect($count.defaultPersistence == .persistWhenNil)
    }

    @Test(.timeLimit(.minutes(1)))
    func theProjectedValueReportsUpdatesFromAnotherGarage() async throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("updates.garage"))
        let other = try TestEngine.garage(path: directory.path("updates.garage"))
        let model = STPlayerModel(garage: garage)
        var reader = STUpdateReader(model.$volume.updates)

        try await other.set(0.7, for: STPlayerModel.volume)
        #expect(try await reader.next() == .persisted(0.7))
        #expect(model.volume == 0.7)
        try await other.removeValue(for: STPlayerModel.volume)
        #expect(try await reader.next() == .removed)
        #expect(model.volume == model.$volume.defaultValue)
    }
}

enum STShade: Int, Sendable { case light = 1, dark = 2 }

/// Declarations as Persist's README writes them: an optional with no default, and a value
/// with a transformer and an initial value.
final class STPersistStyle {
    @Persisted var lastSearch: String?
    @Persisted var shade: STShade

    init(garage: Garage) {
        _lastSearch = Persisted(id: "st-last-search", in: garage)
        _shade = Persisted(wrappedValue: .dark, id: "st-shade", in: garage, transformer: RawRepresentableTransformer())
    }
}
