import Foundation
@testable import GarageLite

/// A `garage-stress-worker` process a test launched (a ``ChildProcess``), with its output
/// (stdout and stderr) in a file, which the test can wait for or kill.
final class WorkerProcess: Sendable {
    let name: String
    let output: URL
    private let process: ChildProcess

    /// Launches `executable` with `arguments`; its output goes to `<directory>/<name>.out`.
    init(name: String, executable: URL, arguments: [String], directory: URL) throws {
        self.name = name
        output = directory.appendingPathComponent("\(name).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process = try ChildProcess(executable: executable, arguments: arguments, output: output)
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// Whether the process ended within `timeout` seconds (0: whether it has ended).
    func wait(timeout: TimeInterval) -> Bool {
        process.wait(timeout: timeout)
    }

    /// Sends SIGKILL: the process ends at once, wherever it was.
    func kill() {
        process.kill()
    }

    /// Whether the process exited with status 0 (after `wait` said it ended).
    var exitedCleanly: Bool { process.exitedCleanly }

    var wasKilled: Bool { process.wasKilled }

    var outputText: String {
        (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }

    /// The lines of its output that begin with `prefix`.
    func outputLines(startingWith prefix: String) -> [String] {
        outputText.split(separator: "\n").map(String.init).filter { $0.hasPrefix(prefix) }
    }
}

/// Appends whole lines to a file other processes append to as well: one `write(2)` per line on
/// a descriptor opened with `O_APPEND`, as the worker does.
final class SharedLogAppender: Sendable {
    private let descriptor: Int32

    init?(path: String) {
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        if descriptor < 0 { return nil }
    }

    deinit {
        close(descriptor)
    }

    /// Appends `<kind> <who> <time> <fields...>`, the worker's format.
    @discardableResult
    func write(_ kind: String, _ who: String, _ fields: String...) -> Bool {
        let line = ([kind, who, "\(Date().timeIntervalSince1970)"] + fields).joined(separator: " ") + "\n"
        let bytes = Array(line.utf8)
        return bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) } == bytes.count
    }
}
