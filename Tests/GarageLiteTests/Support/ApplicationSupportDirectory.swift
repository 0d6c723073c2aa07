import Foundation

/// Runs `body` with the application support directory `Garage(named:)` uses moved to a fresh
/// temporary directory (on Linux, `$XDG_DATA_HOME`, read at each call), one test at a time: the
/// environment is the whole process's, so the tests that open a garage by name take this lock.
/// Elsewhere it runs `body` in the user's directory, as an app would.
func withTemporaryApplicationSupportDirectory<Result>(_ body: (TemporaryDirectory) throws -> Result) throws -> Result {
    applicationSupportLock.lock()
    defer { applicationSupportLock.unlock() }
    let directory = try TemporaryDirectory()
    #if os(Linux)
    let previous = ProcessInfo.processInfo.environment["XDG_DATA_HOME"]
    setenv("XDG_DATA_HOME", directory.url.path, 1)
    defer {
        if let previous { setenv("XDG_DATA_HOME", previous, 1) } else { unsetenv("XDG_DATA_HOME") }
    }
    #endif
    return try body(directory)
}

private let applicationSupportLock = NSLock()
