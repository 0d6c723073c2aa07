import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One timed run of a workload by one contender: its wall time, and the CPU that the client
/// (this process, or the worker processes) and the server (every process of the PostgreSQL
/// cluster) spent meanwhile.
struct Run: Sendable {
    var seconds: Double
    var operations: Int
    var clientCPU: Double
    /// `nil` when the server's processes can't be read (not on this machine, or no /proc).
    var serverCPU: Double?

    var opsPerSecond: Double { Double(operations) / seconds }
}

extension Array where Element == Run {
    /// The run of median wall time (the slower of the two middle ones for an even count).
    var median: Run? {
        guard !isEmpty else { return nil }
        return sorted { $0.seconds < $1.seconds }[count / 2]
    }
}

/// CPU seconds, from the kernel's accounting.
enum CPU {
    /// This process's user and system time so far.
    static func ofThisProcess() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    private static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }

    /// The CPU time of the PostgreSQL cluster whose postmaster is `postmaster`: its own, that of
    /// its children that ended (the kernel adds those to its `cutime` and `cstime` once it
    /// reaps them), and that of its live children (backends, the WAL writer, autovacuum…).
    /// `nil` without a /proc to read.
    static func ofServer(postmaster: Int32) -> Double? {
        guard let own = stat(of: postmaster) else { return nil }
        var ticks = own.utime + own.stime + own.cutime + own.cstime
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in processes {
            guard let pid = Int32(entry), pid != postmaster, let child = stat(of: pid), child.ppid == postmaster else { continue }
            ticks += child.utime + child.stime
        }
        return Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The processes whose parent is `postmaster`.
    static func children(of postmaster: Int32) -> Set<Int32> {
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return Set(processes.compactMap { entry in
            guard let pid = Int32(entry), stat(of: pid)?.ppid == postmaster else { return nil }
            return pid
        })
    }

    /// Waits until the postmaster has reaped its children that are not in `baseline` (the
    /// backends of clients that ended), up to 5 seconds: until then, the CPU of a backend that
    /// ended is in neither its own /proc entry nor its parent's `cutime`.
    static func settle(postmaster: Int32, baseline: Set<Int32>) {
        let deadline = ContinuousClock.now + .seconds(5)
        while !children(of: postmaster).isSubset(of: baseline), ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// The postmaster of the backend `backend`, when it runs on this machine.
    static func postmaster(ofBackend backend: Int32) -> Int32? {
        guard let backendStat = stat(of: backend), let parent = stat(of: backendStat.ppid),
              parent.command.hasPrefix("postgres") || parent.command.hasPrefix("postmaster") else { return nil }
        return backendStat.ppid
    }

    /// The fields of /proc/<pid>/stat the accounting reads (clock ticks).
    private struct ProcessStat {
        var command: String
        var ppid: Int32
        var utime, stime, cutime, cstime: Int
    }

    private static func stat(of pid: Int32) -> ProcessStat? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        // After the command's ")": state, ppid, … (field 3 of proc(5) is the first); utime is 14.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let ppid = Int32(fields[1]) else { return nil }
        func field(_ number: Int) -> Int { Int(fields[number - 3]) ?? 0 }
        return ProcessStat(command: String(text[text.index(after: open)..<close]), ppid: ppid,
                           utime: field(14), stime: field(15), cutime: field(16), cstime: field(17))
    }
}

/// Times `body`, and the CPU of this process and of the server while it runs.
func measure(postmaster: Int32?, operations: Int, _ body: () async throws -> Void) async rethrows -> Run {
    let server = postmaster.flatMap(CPU.ofServer)
    let client = CPU.ofThisProcess()
    let start = ContinuousClock.now
    try await body()
    let seconds = (ContinuousClock.now - start).seconds
    let clientCPU = CPU.ofThisProcess() - client
    let serverCPU = server.flatMap { before in postmaster.flatMap(CPU.ofServer).map { $0 - before } }
    return Run(seconds: seconds, operations: operations, clientCPU: clientCPU, serverCPU: serverCPU)
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Progress, on stderr (the report goes to stdout).
func progress(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// A workload that did not do what it reports.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Throws unless `condition` holds: each workload checks that it did the work it reports.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw BenchFailure(message()) }
}
