import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Peak resident memory per workload.
///
/// On Linux, writing "5" to /proc/self/clear_refs resets the process's high-water mark
/// (VmHWM in /proc/self/status) to its current RSS, so each workload reports its own peak.
/// Elsewhere, or when /proc is not writable, the process's lifetime peak is reported instead.
enum Memory {
    /// Whether per-workload peaks are available (decided by the first reset).
    nonisolated(unsafe) private(set) static var canResetPeak = true

    /// Returns freed memory to the system, then resets the high-water mark.
    static func resetPeak() {
        releaseFreedMemory()
        guard canResetPeak else { return }
        do {
            try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        } catch {
            canResetPeak = false
        }
    }

    /// The peak RSS since the last reset, in MB (or the process's peak, see ``canResetPeak``).
    static func peakMB() -> Double {
        if canResetPeak, let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kB = Double(line.split(separator: " ").dropFirst().first ?? "") {
            return kB / 1024
        }
        canResetPeak = false
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        #if canImport(Darwin)
        return Double(usage.ru_maxrss) / 1_048_576 // bytes
        #else
        return Double(usage.ru_maxrss) / 1024 // kB
        #endif
    }

    /// glibc's malloc_trim(0), which the Glibc module does not import: without it, memory
    /// freed by one workload stays resident and inflates the next one's baseline.
    private static func releaseFreedMemory() {
        #if canImport(Glibc)
        typealias MallocTrim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(nil, "malloc_trim") {
            _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
        }
        #endif
    }

    /// How the peak was measured, for the report's header.
    static var method: String {
        canResetPeak
            ? "VmHWM after resetting it through /proc/self/clear_refs before each timed cell (malloc_trim first)"
            : "process-lifetime peak (getrusage): per-workload reset is not available on this system"
    }
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Runs `body` with a fresh temporary directory, deleted afterwards.
func withTemporaryDirectory<Result>(_ body: (URL) throws -> Result) throws -> Result {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("garage-bench-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// Progress, on stderr (results go to stdout).
func progress(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Throws unless `condition` holds: each workload checks that it did the work it reports.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw BenchFailure(message()) }
}
