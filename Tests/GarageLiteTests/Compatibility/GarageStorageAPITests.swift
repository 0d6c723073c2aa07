import Foundation
@testable import GarageLite
import Testing

/// Issue 12: GarageStorage's Swift API, as its apps call it, with its meaning.
@Suite("GarageStorage's API")
struct GarageStorageAPITests {
    /// `Garage(named:)` with subfolders in the name creates them, as Core Data does. The
    /// application support directory is `$XDG_DATA_HOME` on Linux, read at each call; no other
    /// test opens a garage by name.
    @Test func aNameWithSubfoldersCreatesThem() throws {
        #if os(Linux)
        let directory = try TemporaryDirectory()
        let previous = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]
        setenv("XDG_DATA_HOME", directory.url.path, 1)
        defer {
            if let previous { setenv("XDG_DATA_HOME", previous, 1) } else { unsetenv("XDG_DATA_HOME") }
        }
        let garage = try Garage(named: "MyApp/People")
        #expect(garage.path == directory.path("MyApp/People.sqlite"))
        try garage.park(Counter(id: 1, value: 1))
        #expect(FileManager.default.fileExists(atPath: directory.path("MyApp/People.sqlite")))
        #endif
    }
}
