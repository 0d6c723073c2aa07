import Foundation
@testable import GarageLite

/// A child process the tests start with `posix_spawn`, instead of Foundation's `Process`, whose
/// `run()` on Linux (Swift 6.3.1) intermittently crashes the test process: it over-reads the
/// directory entries of `/proc/self/fd` (swift-corelibs-foundation pull request 5472, a crash
/// in `memcpy` seen in this suite).
///
/// Its standard output and error go to a file, or to `/dev/null`. Its end is found by polling
/// `waitpid` (`WNOHANG`), under a lock, so that any thread may wait for it or kill it.
final class ChildProcess: Sendable {
    /// How the process ended.
    enum Termination: Equatable, Sendable {
        case exit(Int32)
        case signal(Int32)
    }

    let processIdentifier: pid_t
    private let termination = Protected<Termination?>(nil)

    /// Starts `executable` with `arguments`; its output (stdout and stderr) is appended to
    /// `output`, or discarded.
    init(executable: URL, arguments: [String], output: URL? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let outputPath = output?.path ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        guard result == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO)
        }
        processIdentifier = pid
    }

    /// How it ended, or `nil` while it runs (reaps it once it has ended).
    var ended: Termination? {
        termination.write { termination in
            if let termination { return termination }
            var status: Int32 = 0
            guard waitpid(processIdentifier, &status, WNOHANG) == processIdentifier else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift doesn't import as functions.
            let signal = status & 0x7F
            termination = signal == 0 ? .exit((status >> 8) & 0xFF) : .signal(signal)
            return termination
        }
    }

    var isRunning: Bool { ended == nil }

    /// Whether it ended within `timeout` seconds (0: whether it has ended).
    func wait(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while ended == nil {
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return true
    }

    func waitUntilExit() {
        while !wait(timeout: 3_600) {}
    }

    /// Sends `signal` (SIGKILL by default) if it still runs.
    func kill(_ signal: Int32 = SIGKILL) {
        if isRunning { _ = Foundation.kill(processIdentifier, signal) }
    }

    /// Whether it exited with status 0.
    var exitedCleanly: Bool { ended == .exit(0) }

    /// Whether SIGKILL ended it.
    var wasKilled: Bool { ended == .signal(SIGKILL) }
}
