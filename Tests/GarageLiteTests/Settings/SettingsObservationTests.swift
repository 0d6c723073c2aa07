import Foundation
import GarageStressModels
import Testing
@testable import GarageLite

/// Issue 13: a settings key observed from another task, and from another garage on the file.
@Suite("Settings: updates")
struct SettingsObservationTests {
    static let volume = SettingsKey<STAnimals, Double>(id: "volume", defaultValue: 0.5)

    @Test(.timeLimit(.minutes(1)))
    func aKeyIsObservedFromAnotherTask() async throws {
        let garage = try TestEngine.garage()
        var reader = STUpdateReader(garage.updates(for: Self.volume))
        #expect(try await garage.value(for: Self.volume) == 0.5)

        // Set on yet another task; the reading task receives it.
        try await Task { try garage.set(0.8, for: Self.volume) }.value
        #expect(try await reader.next() == .persisted(0.8))
        try await garage.removeValue(for: Self.volume)
        #expect(try await reader.next() == .removed)
        #expect(try await garage.value(for: Self.volume) == 0.5)

        // A rolled-back transaction tells nothing; a committed one tells its value.
        struct Abort: Error {}
        _ = try? await garage.transaction {
            try await garage.set(0.1, for: Self.volume)
            throw Abort()
        }
        try await garage.transaction { try await garage.set(0.2, for: Self.volume) }
        #expect(try await reader.next() == .persisted(0.2))
    }

    @Test(.timeLimit(.minutes(1)))
    func aKeyIsObservedFromAnotherGarageOnTheFile() async throws {
        let directory = try TemporaryDirectory()
        let writer = try TestEngine.garage(path: directory.path("settings.garage"))
        let observer = try TestEngine.garage(path: directory.path("settings.garage"))
        var reader = STUpdateReader(observer.updates(for: Self.volume))

        try await writer.set(0.9, for: Self.volume)
        #expect(try await reader.next() == .persisted(0.9))
        try await writer.removeValue(for: Self.volume)
        #expect(try await reader.next() == .removed)
        try await writer.set(0.3, for: Self.volume)
        #expect(try await reader.next() == .persisted(0.3))
        #expect(try await observer.value(for: Self.volume) == 0.3)
    }

    @Test(.timeLimit(.minutes(1)))
    func anOptionalKeysUpdatesTellAStoredNilFromARemoval() async throws {
        let garage = try TestEngine.garage()
        let name = SettingsKey<GlobalSettings, String?>(id: "name", defaultValue: "Rex")
        var reader = STUpdateReader(garage.updates(for: name))
        try await garage.set(nil, for: name)
        #expect(try await reader.next() == .persisted(nil))
        try await garage.removeValue(for: name)
        #expect(try await reader.next() == .removed)
    }

    @Test(.timeLimit(.minutes(1)))
    func anUpdateOfAnotherShapeIsAnErrorNamingTheKey() async throws {
        let garage = try TestEngine.garage()
        var reader = STUpdateReader(garage.updates(for: Self.volume))
        try await garage.set("loud", for: SettingsKey<STAnimals, String>(id: "volume", defaultValue: ""))
        let error = try await #require(throws: SettingsError.self) { try await reader.next() }
        guard case .valueMismatch(key: "animals:volume", valueType: "Double", _) = error else {
            Issue.record("expected valueMismatch, got \(error)")
            return
        }
    }
}
