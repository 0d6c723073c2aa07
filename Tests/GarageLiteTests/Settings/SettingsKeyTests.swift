import Foundation
import Testing
@testable import GarageLite

/// Issue 13, typed settings: keys in namespaces, with defaults, read, set and removed on a
/// garage as rows of their own.
@Suite("Settings: keys")
struct SettingsKeyTests {
    @Test func idsJoinTheNamespacesOfTheChain() {
        #expect(SettingsKey<GlobalSettings, Int>(id: "x", defaultValue: 0).id == "x")
        #expect(SettingsKey<STAnimals, Int>(id: "mammals", defaultValue: 0).id == "animals:mammals")
        #expect(SettingsKey<STCats, Int>(id: "lion", defaultValue: 0).id == "animals:cats:lion")
        #expect(SettingsKey<STUnnamed, Int>(id: "tiger", defaultValue: 0).id == "animals:cats:tiger")
        #expect(SettingsKey<STLoopA, Int>(id: "k", defaultValue: 0).id == "b:a:k")
        #expect(GlobalSettings.id.isEmpty)
    }

    @Test func aKeyReadsItsDefaultUntilSetAndAgainOnceRemoved() throws {
        let garage = try TestEngine.garage()
        let lion = SettingsKey<STCats, Int>(id: "lion", defaultValue: 3)
        #expect(try garage.value(for: lion) == 3)
        #expect(try garage.count() == 0)

        try garage.set(7, for: lion)
        #expect(try garage.value(for: lion) == 7)
        try garage.set(8, for: lion)
        #expect(try garage.value(for: lion) == 8)
        // One row of its own, under the key's full id.
        #expect(try garage.count() == 1)
        let row = try #require(try stStoredSetting(garage, "animals:cats:lion"))
        #expect(row.data == #"{"value":8}"#)

        #expect(try garage.removeValue(for: lion))
        #expect(try garage.value(for: lion) == 3)
        #expect(try !garage.removeValue(for: lion))
        #expect(try garage.count() == 0)
    }

    /// Storez's example: a nil default is not a stored empty value.
    @Test func anOptionalKeyHonoursNilAndTheEmptyValue() throws {
        let garage = try TestEngine.garage()
        let nullable = SettingsKey<GlobalSettings, String?>(id: "nullable", defaultValue: nil)
        #expect(try garage.value(for: nullable) == nil)
        try garage.set("", for: nullable)
        #expect(try garage.value(for: nullable) == "")
        try garage.set(nil, for: nullable)
        #expect(try garage.value(for: nullable) == nil)
        #expect(try garage.count() == 1)                      // nil is stored: a value
        #expect(try stStoredSetting(garage, "nullable")?.data == #"{"value":null}"#)

        let nonnull = SettingsKey<GlobalSettings, String>(id: "nonnull", defaultValue: "!")
        #expect(try garage.value(for: nonnull) == "!")
        try garage.set("", for: nonnull)
        #expect(try garage.value(for: nonnull) == "")

        // A stored nil is not a removal: removing brings the default back.
        let named = SettingsKey<GlobalSettings, String?>(id: "named", defaultValue: "Rex")
        try garage.set(nil, for: named)
        #expect(try garage.value(for: named) == nil)
        #expect(try garage.removeValue(for: named))
        #expect(try garage.value(for: named) == "Rex")
    }

    /// Storez's example: a processing block runs on every set, not on the default.
    @Test func theTransformRunsOnSet() throws {
        let garage = try TestEngine.garage()
        let custom = SettingsKey<GlobalSettings, STFillIn?>(id: "custom", defaultValue: STFillIn(strings: ["unset"])) { value in
            var processed = value
            processed?.strings.append("blank!")
            return processed
        }
        #expect(try garage.value(for: custom)?.strings == ["unset"])
        try garage.set(STFillIn(strings: ["fill", "in", "the"]), for: custom)
        #expect(try garage.value(for: custom)?.strings.joined(separator: " ") == "fill in the blank!")
        try garage.set(nil, for: custom)
        #expect(try garage.value(for: custom) == nil)
    }

    @Test func hooksRunOutermostFirstBeforeAndInnermostFirstAfter() throws {
        let garage = try TestEngine.garage()
        let key = SettingsKey<STHookedChild, Int>(id: "k", defaultValue: 0)
        let log = STHookLog()
        try STHookLog.$current.withValue(log) {
            try garage.set(1, for: key)
            #expect(try garage.removeValue(for: key))
            #expect(try !garage.removeValue(for: key))      // nothing removed: no didSet
        }
        #expect(log.recorded == [
            "parent will set hooked:child:k", "child will set hooked:child:k",
            "child did set hooked:child:k", "parent did set hooked:child:k",
            "parent will removal of hooked:child:k", "child will removal of hooked:child:k",
            "child did removal of hooked:child:k", "parent did removal of hooked:child:k",
            "parent will removal of hooked:child:k", "child will removal of hooked:child:k",
        ])
    }

    @Test func aThrowingWillSetCancelsTheChange() async throws {
        let garage = try TestEngine.garage()
        let key = SettingsKey<STHookedChild, Int>(id: "locked", defaultValue: 0)
        try await garage.set(5, for: key)
        let log = STHookLog(refusing: ["hooked:child:locked"])
        await STHookLog.$current.withValue(log) {
            #expect(throws: STRefusal(key: "hooked:child:locked")) { try garage.set(6, for: key) }
            #expect(throws: STRefusal(key: "hooked:child:locked")) { try garage.removeValue(for: key) }
            await #expect(throws: STRefusal(key: "hooked:child:locked")) { try await garage.set(6, for: key) }
            await #expect(throws: STRefusal(key: "hooked:child:locked")) { try await garage.removeValue(for: key) }
        }
        #expect(try await garage.value(for: key) == 5)
        #expect(!log.recorded.contains { $0.contains(" did ") })
        #expect(log.recorded.count == 8)
    }

    /// Settings share the garage's transactions: a set rolls back with the rest.
    @Test func aSetInsideARolledBackTransactionIsUndone() throws {
        let garage = try TestEngine.garage()
        let volume = SettingsKey<GlobalSettings, Double>(id: "volume", defaultValue: 0.5)
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try garage.transaction {
                try garage.set(0.9, for: volume)
                #expect(try garage.value(for: volume) == 0.9)   // the transaction reads its changes
                try garage.park(Counter(id: 1, value: 1))
                throw Abort()
            }
        }
        #expect(try garage.value(for: volume) == 0.5)
        #expect(try garage.count() == 0)

        try garage.beginTransaction()
        try garage.set(0.7, for: volume)
        try garage.rollbackTransaction()
        #expect(try garage.value(for: volume) == 0.5)

        try garage.set(0.2, for: volume)
        try garage.transaction {
            try garage.removeValue(for: volume)
            try garage.set(0.3, for: volume)
        }
        #expect(try garage.value(for: volume) == 0.3)
    }

    @Test func aStoredValueOfAnotherShapeIsAnErrorNamingTheKey() async throws {
        let garage = try TestEngine.garage()
        try await garage.set(42, for: SettingsKey<STCats, Int>(id: "shape", defaultValue: 0))
        let asText = SettingsKey<STCats, String>(id: "shape", defaultValue: "default")
        let error = try #require(throws: SettingsError.self) { try garage.value(for: asText) }
        guard case .valueMismatch(key: "animals:cats:shape", valueType: "String", _) = error else {
            Issue.record("expected valueMismatch, got \(error)")
            return
        }
        #expect(error.description.contains("\"animals:cats:shape\""))
        // Said of the setting, not of a parked object.
        #expect(!error.description.contains("park it again") && !error.description.contains("GarageLite.Setting("),
                "\(error)")
        await #expect(throws: error) { try await garage.value(for: asText) }

        // Inside a structure, the path of the mismatch is told.
        try await garage.set(["width": 1], for: SettingsKey<GlobalSettings, [String: Int]>(id: "window", defaultValue: [:]))
        let window = SettingsKey<GlobalSettings, STWindow>(id: "window", defaultValue: STWindow(width: 0, height: 0))
        let nested = try #require(throws: SettingsError.self) { try garage.value(for: window) }
        #expect(nested.description.contains("\"window\""), "\(nested)")
        #expect(nested.description.contains("height"), "\(nested)")

        // Overwriting it is allowed.
        try await garage.set("text", for: asText)
        #expect(try await garage.value(for: asText) == "text")
    }

    /// The async variants give what the synchronous ones give.
    @Test func theAsyncVariantsMatchTheSynchronousOnes() async throws {
        let syncGarage = try TestEngine.garage()
        let asyncGarage = try TestEngine.garage()
        let lion = SettingsKey<STCats, Int?>(id: "lion", defaultValue: 1)

        let syncSteps = try Self.steps(syncGarage, lion)
        var asyncSteps: [String] = []
        asyncSteps.append("\(try await asyncGarage.value(for: lion) as Any)")
        try await asyncGarage.set(nil, for: lion)
        asyncSteps.append("set")
        asyncSteps.append("\(try await asyncGarage.value(for: lion) as Any)")
        try await asyncGarage.set(9, for: lion)
        asyncSteps.append("set")
        asyncSteps.append("\(try await asyncGarage.value(for: lion) as Any)")
        asyncSteps.append("\(try await asyncGarage.removeValue(for: lion))")
        asyncSteps.append("\(try await asyncGarage.removeValue(for: lion))")
        asyncSteps.append("\(try await asyncGarage.value(for: lion) as Any)")
        #expect(syncSteps == asyncSteps)
        #expect(syncSteps == ["Optional(1)", "set", "nil", "set", "Optional(9)", "true", "false", "Optional(1)"])
    }

    /// The synchronous steps of ``theAsyncVariantsMatchTheSynchronousOnes()``.
    private static func steps(_ garage: Garage, _ lion: SettingsKey<STCats, Int?>) throws -> [String] {
        var steps: [String] = []
        steps.append("\(try garage.value(for: lion) as Any)")
        try garage.set(nil, for: lion)
        steps.append("set")
        steps.append("\(try garage.value(for: lion) as Any)")
        try garage.set(9, for: lion)
        steps.append("set")
        steps.append("\(try garage.value(for: lion) as Any)")
        steps.append("\(try garage.removeValue(for: lion))")
        steps.append("\(try garage.removeValue(for: lion))")
        steps.append("\(try garage.value(for: lion) as Any)")
        return steps
    }

    /// Settings share the garage's encryption.
    @Test func aSettingIsEncryptedWithTheGarage() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = TestEncryptor()
        let secret = SettingsKey<GlobalSettings, String>(id: "token", defaultValue: "")
        try garage.set("s3cr3t", for: secret)
        let row = try #require(try stStoredSetting(garage, "token"))
        #expect(row.isEncrypted)
        #expect(!row.data.contains("s3cr3t"))
        #expect(try garage.value(for: secret) == "s3cr3t")
    }

    /// A key and a record of the app's with the same identifier are different rows.
    @Test func aSettingIsNotARecordOfTheSameIdentifier() throws {
        let garage = try TestEngine.garage()
        try garage.park("a record", identifier: "name")
        let name = SettingsKey<GlobalSettings, String>(id: "name", defaultValue: "none")
        #expect(try garage.value(for: name) == "none")
        try garage.set("a setting", for: name)
        #expect(try garage.retrieve(String.self, identifier: "name") == "a record")
        #expect(try garage.value(for: name) == "a setting")
    }
}

/// Read-modify-write of a setting, atomically.
@Suite("Settings: updates of a value")
struct SettingsUpdateValueTests {
    static let counter = SettingsKey<STCats, Int>(id: "counter", defaultValue: 0)

    @Test func concurrentIncrementsFromTasksAndGaragesAreNotLost() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("settings.sqlite")
        let first = try TestEngine.garage(path: path, busyTimeout: 30)
        let second = try TestEngine.garage(path: path, busyTimeout: 30)
        #expect(try await first.updateValue(for: Self.counter) { $0 + 1 } == 1)   // from the default
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                let garage = task.isMultiple(of: 2) ? first : second
                group.addTask {
                    for _ in 0..<25 {
                        if task < 4 {
                            try await garage.updateValue(for: Self.counter) { $0 + 1 }
                        } else {
                            try Self.increment(in: garage)   // the synchronous form, on a thread of the pool
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await first.value(for: Self.counter) == 201)
        #expect(try await second.value(for: Self.counter) == 201)
    }

    private static func increment(in garage: Garage) throws {
        try garage.updateValue(for: counter) { $0 + 1 }
    }

    @Test func anUpdateThatThrowsWritesNothingAndTheTransformApplies() throws {
        let garage = try TestEngine.garage()
        struct Refused: Error {}
        #expect(throws: Refused.self) { try garage.updateValue(for: Self.counter) { _ in throw Refused() } }
        #expect(try !garage.removeValue(for: Self.counter))
        let capped = SettingsKey<STCats, Int>(id: "capped", defaultValue: 0) { min($0, 10) }
        #expect(try garage.updateValue(for: capped) { $0 + 50 } == 10)
        #expect(try garage.value(for: capped) == 10)
        let shade = SettingsKey<GlobalSettings, STShade>(id: "shade", defaultValue: .dark, transformer: RawRepresentableTransformer())
        #expect(try garage.updateValue(for: shade) { $0 == .dark ? .light : .dark } == .light)
        #expect(try garage.value(for: SettingsKey<GlobalSettings, Int>(id: "shade", defaultValue: 0)) == 1)
    }
}
