import Foundation
import GarageStressModels
import Testing
@testable import GarageLite

// A settings key observed while another process writes it: the process (garage-stress-worker)
// opens the same store (TestStores: the file, or the schema in the PostgreSQL pass).

extension SettingsObservationTests {
    @Test(.timeLimit(.minutes(1)), .acrossProcesses)
    func aKeyIsObservedFromAnotherProcess() async throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        let directory = try TemporaryDirectory()
        let path = directory.path("settings.garage")
        let observer = try TestEngine.garage(path: path, busyTimeout: 30)
        var reader = STUpdateReader(observer.updates(for: StressSettings.greeting))
        func run(_ value: String) throws {
            let process = try ChildProcess(executable: worker, arguments: [path, "setting", value])
            process.waitUntilExit()
            #expect(process.exitedCleanly)
        }
        try run("hello")
        #expect(try await reader.next() == .persisted("hello"))
        try run("-")
        #expect(try await reader.next() == .removed)
        #expect(try await observer.value(for: StressSettings.greeting) == "none")
    }
}
