import Foundation
import Testing

/// A copy of one of the golden store files in `Fixtures/`, in a temporary directory.
///
/// The originals are never opened: a store in WAL mode gets `-wal` and `-shm` files next to
/// it as soon as SQLite opens it, even read-only. ``expectOriginalUnchanged()`` checks that
/// the original's bytes are the ones copied, and that nothing appeared next to it.
struct FixtureFile {
    /// `Fixtures/` at the root of the package.
    static let fixturesFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // Support
        .deletingLastPathComponent() // GarageLiteTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures", isDirectory: true)

    /// The folder of the files of format version `version`.
    static func folder(version: Int) -> URL {
        fixturesFolder.appendingPathComponent("v\(version)", isDirectory: true)
    }

    let original: URL
    let originalBytes: Data
    let directory: TemporaryDirectory
    /// The path of the copy.
    let path: String

    /// Copies `Fixtures/v<version>/<name>`.
    init(_ name: String, version: Int = 1) throws {
        original = Self.folder(version: version).appendingPathComponent(name)
        originalBytes = try Data(contentsOf: original)
        directory = try TemporaryDirectory()
        path = directory.path(name)
        try originalBytes.write(to: URL(fileURLWithPath: path))
    }

    /// The copy's bytes.
    func bytes() throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    func expectOriginalUnchanged(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect((try? Data(contentsOf: original)) == originalBytes,
                "\(original.lastPathComponent) changed", sourceLocation: sourceLocation)
        for suffix in ["-wal", "-shm", "-journal"] {
            #expect(!FileManager.default.fileExists(atPath: original.path + suffix),
                    "\(original.lastPathComponent)\(suffix) appeared next to the original", sourceLocation: sourceLocation)
        }
    }
}
