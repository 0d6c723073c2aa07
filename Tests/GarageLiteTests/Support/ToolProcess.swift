import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a command-line tool built with the tests (`garage`, Sources/garage) to its end, with
/// `posix_spawn` rather than Foundation's `Process` (see ``ChildProcess`` for why), and gives
/// back its exit status and what it wrote on standard output and standard error, separately.
///
/// Standard output and error go to files in a temporary folder, read once the tool has ended;
/// standard input is a file, or `/dev/null`. With ``run(_:stdin:environment:timeout:stderrOnTerminal:)``'s
/// `stderrOnTerminal`, standard error is the slave side of a pseudo-terminal (so `isatty(2)`
/// holds in the tool), whose master side is read while it runs.
enum ToolProcess {
    /// How a run ended, and what it wrote.
    struct Result: CustomStringConvertible {
        let arguments: [String]
        /// The exit status, or `128 + signal` when a signal ended it.
        let exitCode: Int32
        /// The signal that ended it, if one did.
        let signal: Int32?
        let stdoutData: Data
        let stderrData: Data

        var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
        var stderr: String { String(decoding: stderrData, as: UTF8.self) }

        var description: String {
            "garage \(arguments.joined(separator: " ")) -> exit \(exitCode)\(signal.map { " (signal \($0))" } ?? "")\n"
                + "stdout: \(stdout.prefix(2_000))\nstderr: \(stderr.prefix(2_000))"
        }
    }

    enum Failure: Error, CustomStringConvertible {
        case executableNotFound(String)
        case spawnFailed(Int32)
        case timedOut(arguments: [String], seconds: TimeInterval)
        case terminalUnavailable(Int32)

        var description: String {
            switch self {
            case let .executableNotFound(name): "the executable \(name) was not found next to the test bundle (swift build --build-tests)"
            case let .spawnFailed(code): "posix_spawn failed: \(String(cString: strerror(code)))"
            case let .timedOut(arguments, seconds): "\(arguments) did not end within \(seconds) s: killed"
            case let .terminalUnavailable(code): "openpty failed: \(String(cString: strerror(code)))"
            }
        }
    }

    /// The environment variables the tool reads, removed from the inherited environment so that
    /// the test runner's own environment can't change a test's outcome.
    static let toolVariables = ["GARAGE_KEY", "GARAGE_NEW_KEY", "GARAGE_PROGRESS_AFTER"]

    /// An executable product named `name` (`garage`, `garage-stress-worker`), built next to
    /// the test binary: found from the test bundle's and the process's paths, up to five
    /// folders up.
    static func builtExecutable(named name: String) -> URL? {
        var starts: [URL] = [Bundle.main.bundleURL, Bundle.main.executableURL].compactMap { $0 }
        if let first = CommandLine.arguments.first {
            starts.append(URL(fileURLWithPath: first).resolvingSymlinksInPath())
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            starts.append(bundle.bundleURL)
        }
        for start in starts {
            var folder = start.standardizedFileURL
            for _ in 0..<5 {
                folder = folder.deletingLastPathComponent()
                let candidate = folder.appendingPathComponent(name)
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isFolder), !isFolder.boolValue,
                   FileManager.default.isExecutableFile(atPath: candidate.path) {
                    return candidate
                }
            }
        }
        return nil
    }

    /// The `garage` tool.
    static func garage() throws -> URL {
        guard let url = builtExecutable(named: "garage") else { throw Failure.executableNotFound("garage") }
        return url
    }

    /// Runs `garage` with `arguments` and waits for its end (killing it, and throwing, after
    /// `timeout` seconds).
    ///
    /// - parameter stdin: A file to read standard input from; `/dev/null` when `nil`.
    /// - parameter environment: Variables to set (or, with `nil`, to remove) over this process's
    ///   environment, from which ``toolVariables`` are removed first.
    /// - parameter stderrOnTerminal: Whether standard error is a pseudo-terminal; its output is
    ///   then what the terminal received (line feeds as `\r\n`).
    static func run(_ arguments: [String], stdin: String? = nil, environment: [String: String?] = [:],
                    timeout: TimeInterval = 120, stderrOnTerminal: Bool = false) throws -> Result {
        try run(executable: garage(), arguments, stdin: stdin, environment: environment, timeout: timeout,
                stderrOnTerminal: stderrOnTerminal)
    }

    static func run(executable: URL, _ arguments: [String], stdin: String? = nil, environment: [String: String?] = [:],
                    timeout: TimeInterval = 120, stderrOnTerminal: Bool = false) throws -> Result {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("GarageLiteTests-tool-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stdoutPath = folder.appendingPathComponent("stdout").path
        let stderrPath = folder.appendingPathComponent("stderr").path

        // The pseudo-terminal, when standard error is one: the tool writes to the slave side.
        var master: Int32 = -1
        var slave: Int32 = -1
        if stderrOnTerminal {
            guard openpty(&master, &slave, nil, nil, nil) == 0 else { throw Failure.terminalUnavailable(errno) }
            // Not inherited by processes other tests start meanwhile (they'd hold the slave open).
            _ = fcntl(master, F_SETFD, FD_CLOEXEC)
            _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
            _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        }
        defer {
            if master >= 0 { close(master) }
            if slave >= 0 { close(slave) }
        }

        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if stderrOnTerminal {
            // dup2 clears FD_CLOEXEC on the copy: the child's standard error stays open.
            posix_spawn_file_actions_adddup2(&actions, slave, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }

        var variables = ProcessInfo.processInfo.environment
        for name in toolVariables { variables[name] = nil }
        for (name, value) in environment { variables[name] = value }
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }

        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
        guard spawned == 0 else { throw Failure.spawnFailed(spawned) }
        if slave >= 0 {
            close(slave)
            slave = -1
        }

        var terminalOutput = Data()
        /// Reads what the master side holds now; returns whether the slave side is closed.
        func readTerminal(waitingMilliseconds: Int32) -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, waitingMilliseconds) > 0 else { return false }
            while true {
                let count = read(master, &buffer, buffer.count)
                if count > 0 {
                    terminalOutput.append(contentsOf: buffer[0..<count])
                } else if count == 0 {
                    return true
                } else if errno == EINTR {
                    continue
                } else {
                    // EAGAIN: nothing more for now; EIO: every holder of the slave side closed it.
                    return errno != EAGAIN && errno != EWOULDBLOCK
                }
            }
        }

        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        var terminalClosed = false
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped == -1 && errno != EINTR { throw Failure.spawnFailed(errno) }
            if Date() >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw Failure.timedOut(arguments: arguments, seconds: timeout)
            }
            if stderrOnTerminal && !terminalClosed {
                terminalClosed = readTerminal(waitingMilliseconds: 20)
            } else {
                usleep(2_000)
            }
        }
        if stderrOnTerminal {
            // The tool has ended: what it wrote is in the terminal's buffer. Read until the
            // slave side reads as closed, or nothing more comes.
            while !terminalClosed {
                let before = terminalOutput.count
                terminalClosed = readTerminal(waitingMilliseconds: 200)
                if terminalOutput.count == before { break }
            }
        }

        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift doesn't import as functions.
        let signal = status & 0x7F
        let stdoutData = (try? Data(contentsOf: URL(fileURLWithPath: stdoutPath))) ?? Data()
        let stderrData = stderrOnTerminal ? terminalOutput : ((try? Data(contentsOf: URL(fileURLWithPath: stderrPath))) ?? Data())
        return Result(arguments: arguments, exitCode: signal == 0 ? (status >> 8) & 0xFF : 128 + signal,
                      signal: signal == 0 ? nil : signal, stdoutData: stdoutData, stderrData: stderrData)
    }
}
