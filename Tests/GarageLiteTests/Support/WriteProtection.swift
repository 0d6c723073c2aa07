import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes a file or a folder unwritable for this process — even when it runs as root, as tests
/// do in containers and on CI, where `chmod` alone stops nobody.
///
/// Not root: `chmod` (0444 for a file, 0555 for a folder). Root: the immutable flag, which
/// binds root too — `chattr +i` on Linux (it needs the CAP_LINUX_IMMUTABLE capability, which
/// Docker does not grant by default) or `chflags uchg` on Apple platforms. Each protection is
/// checked with `access(2)`; ``isAvailable`` says whether this system can protect at all.
enum WriteProtection {
    /// Whether ``protect(_:)`` works here: tests that need it are skipped otherwise.
    static let isAvailable: Bool = {
        guard let directory = try? TemporaryDirectory() else { return false }
        let path = directory.path("probe")
        guard FileManager.default.createFile(atPath: path, contents: Data("probe".utf8)) else { return false }
        defer { unprotect(path) }
        return protect(path)
    }()

    /// Makes `path` unwritable; returns whether it now is.
    @discardableResult
    static func protect(_ path: String) -> Bool {
        if getuid() != 0 {
            _ = chmod(path, isDirectory(path) ? 0o555 : 0o444)
        } else {
            #if canImport(Darwin)
            run("/usr/bin/chflags", ["uchg", path])
            #else
            run(chattr, ["+i", path])
            #endif
        }
        return access(path, W_OK) != 0
    }

    /// Makes `path` writable again.
    static func unprotect(_ path: String) {
        if getuid() != 0 {
            _ = chmod(path, isDirectory(path) ? 0o755 : 0o644)
        } else {
            #if canImport(Darwin)
            run("/usr/bin/chflags", ["nouchg", path])
            #else
            run(chattr, ["-i", path])
            #endif
        }
    }

    private static let chattr = ["/usr/bin/chattr", "/bin/chattr", "/sbin/chattr"]
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/chattr"

    private static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    private static func run(_ executable: String, _ arguments: [String]) {
        do {
            try ChildProcess(executable: URL(fileURLWithPath: executable), arguments: arguments).waitUntilExit()
        } catch {
            // Not installed: `access(2)` then reports the path as still writable.
        }
    }
}
