import ArgumentParser
import Foundation

/// The worker processes of the claim/complete workloads: this executable again, run with the
/// hidden `worker` subcommand (``Worker``).
///
/// Each worker connects (opens its garage, or the floor's connection) and says `ready` on its
/// standard output; when all are ready, the bench notes the time and its CPU counters and
/// writes `go` to each one's standard input (the start barrier). Each claims batches until none
/// is left, completing each, then prints `done <rows> <claims> <cpu seconds>` and exits; the
/// run ends when the last one has exited (its standard output reaches its end).
enum WorkerProcesses {
    /// What a run of the workers did.
    struct Outcome {
        var seconds: Double
        /// Rows each worker claimed and completed.
        var rows: [Int]
        /// Claims each worker made (those that returned rows).
        var claims: [Int]
        /// The CPU the workers spent between the barrier and their `done`.
        var clientCPU: Double
        var serverCPU: Double?
        /// What the workers sent between the barrier and their exit, through `relay`.
        var counts: ProtocolCounts?
    }

    /// Runs `count` workers of `kind` on `schema` until every row is claimed and completed.
    /// With `relay` (which `server` leads to), counts what they send after the barrier.
    static func run(count: Int, kind: ContenderKind, server: ServerAddress, schema: String, batch: Int,
                    postmaster: Int32?, relay: CountingRelay? = nil) async throws -> Outcome {
        let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
        let backends = postmaster.map(CPU.children) ?? []
        var processes: [(process: Process, input: Pipe, output: Pipe)] = []
        defer {
            for (process, _, _) in processes where process.isRunning { process.terminate() }
        }
        for _ in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = ["worker", "--url", server.url, "--schema", schema, "--contender", kind.rawValue,
                                 "--batch", String(batch)]
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            processes.append((process, input, output))
        }
        for (index, worker) in processes.enumerated() {
            let line = readLine(from: worker.output.fileHandleForReading)
            try expect(line == "ready", "worker \(index) said \(line.map { "\"\($0)\"" } ?? "nothing") instead of ready")
        }

        let countsBefore = try await relay?.counts()
        let serverBefore = postmaster.flatMap(CPU.ofServer)
        let start = ContinuousClock.now
        for worker in processes {
            worker.input.fileHandleForWriting.write(Data("go\n".utf8))
            try worker.input.fileHandleForWriting.close()
        }
        // Each read returns at its worker's exit, which closes the pipe: after the last, every one has exited.
        let outputs = processes.map { String(decoding: $0.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        let seconds = (ContinuousClock.now - start).seconds
        if let postmaster { CPU.settle(postmaster: postmaster, baseline: backends) }
        let serverCPU = serverBefore.flatMap { before in postmaster.flatMap(CPU.ofServer).map { $0 - before } }

        var outcome = Outcome(seconds: seconds, rows: [], claims: [], clientCPU: 0, serverCPU: serverCPU)
        if let relay, let countsBefore { outcome.counts = try await relay.counts() - countsBefore }
        for (index, (worker, output)) in zip(processes, outputs).enumerated() {
            worker.process.waitUntilExit()
            try expect(worker.process.terminationStatus == 0, "worker \(index) exited with status \(worker.process.terminationStatus)")
            let fields = output.split(whereSeparator: \.isWhitespace)
            guard fields.count == 4, fields[0] == "done", let rows = Int(fields[1]), let claims = Int(fields[2]),
                  let cpu = Double(fields[3]) else {
                throw BenchFailure("worker \(index) ended with \"\(output)\" instead of done <rows> <claims> <cpu>")
            }
            outcome.rows.append(rows)
            outcome.claims.append(claims)
            outcome.clientCPU += cpu
        }
        return outcome
    }

    /// One line from `handle`, without its newline; `nil` at the end of the stream.
    private static func readLine(from handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        while true {
            guard let byte = try? handle.read(upToCount: 1), let first = byte.first else {
                return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
            }
            if first == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(first)
        }
    }
}

/// A worker process (see ``WorkerProcesses``): `garage-bench-postgres worker --url … --schema …
/// --contender GarageLite|floor`. Not for use by hand.
struct Worker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker", abstract: "One worker process of the claim/complete workloads (the bench runs it).",
        shouldDisplay: false)

    @Option(help: "The server's postgres:// URL, without a schema.")
    var url: String

    @Option(help: "The schema whose notes to claim.")
    var schema: String

    @Option(help: "GarageLite or floor.")
    var contender: String

    @Option(help: "Rows a claim takes.")
    var batch = 50

    func run() async throws {
        guard let kind = ContenderKind(rawValue: contender) else { throw ValidationError("unknown contender \(contender)") }
        let store = try await kind.open(try ServerAddress(url: url), schema: schema)
        say("ready")
        guard Swift.readLine() == "go" else { throw BenchFailure("the bench did not say go") }
        let cpu = CPU.ofThisProcess()
        var rows = 0, claims = 0
        while true {
            let claimed = try await store.claimAndComplete(limit: batch)
            if claimed == 0 { break }
            rows += claimed
            claims += 1
        }
        say("done \(rows) \(claims) \(CPU.ofThisProcess() - cpu)")
        await store.close()
    }

    /// Writes `line` on standard output at once (unbuffered).
    private func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
