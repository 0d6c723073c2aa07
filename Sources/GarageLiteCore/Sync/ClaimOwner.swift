import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process that took a claim: its id with its start time (a process id is reused once its
/// process ends; with its start time it names one process), and where its id means that
/// process (``host``). Stored in the claim,
/// so that a garage tells a dead process's claim from a live one without waiting for it to
/// expire (``Garage/releaseStaleClaims()-6epwf``).
package struct ClaimOwner: Sendable, Equatable {
    package var processID: Int32
    /// When the process started, in the operating system's own unit (Linux: clock ticks since
    /// boot; Apple platforms: microseconds since 1970); 0 when it can't be read.
    package var startTime: UInt64
    /// Where the process id names this process: on Linux, the boot and the process-id namespace
    /// (two containers that share a host name and a store file have their own process ids);
    /// elsewhere, the host name. Empty when it can't be read: then no claim is ever taken for
    /// a dead process's.
    package var host: String

    /// This process.
    package static let current = ClaimOwner(processID: getpid(), startTime: startTime(of: getpid()) ?? 0, host: processIDSpace())

    /// Where this process's id names it (see ``host``); empty when it can't be read.
    private static func processIDSpace() -> String {
        #if os(Linux)
        guard let boot = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8),
              let namespace = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid") else { return "" }
        return boot.trimmingCharacters(in: .whitespacesAndNewlines) + "/" + namespace
        #else
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count) == 0 else { return "" }
        return String(cString: name)
        #endif
    }

    /// The text of a claim this owner takes: a new identifier, then the owner.
    package func claimText() -> String {
        "\(UUID().uuidString)|\(processID)|\(startTime)|\(host)"
    }

    /// The owner a claim's text names, or `nil` for a claim of an older version (a bare
    /// identifier), which names none.
    package init?(claimText: String) {
        let parts = claimText.split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let processID = Int32(parts[1]), let startTime = UInt64(parts[2]) else { return nil }
        self.init(processID: processID, startTime: startTime, host: String(parts[3]))
    }

    package init(processID: Int32, startTime: UInt64, host: String) {
        self.processID = processID
        self.startTime = startTime
        self.host = host
    }

    /// Whether the owner is known to have ended: a process of this host whose id no process
    /// has now, or has with another start time. `false` for another host's (it can't be seen
    /// from here), and whenever it can't be told.
    package var hasEnded: Bool {
        guard !host.isEmpty, host == ClaimOwner.current.host, startTime != 0 else { return false }
        guard let now = Self.startTime(of: processID) else {
            // No such process (ESRCH): ended. Any other answer (EPERM: it runs, as another user).
            return kill(processID, 0) != 0 && errno == ESRCH
        }
        return now != startTime
    }

    /// The start time of the process `processID`, or `nil` when there is none (or it can't be read).
    package static func startTime(of processID: Int32) -> UInt64? {
        #if os(Linux)
        // /proc/<pid>/stat: the 22nd field, after the command name in parentheses (which may
        // hold spaces and parentheses itself: the fields start after the last ")").
        guard let stat = try? String(contentsOfFile: "/proc/\(processID)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        // fields[0] is the 3rd field (state): the 22nd is fields[19].
        return fields.count > 19 ? UInt64(fields[19]) : nil
        #elseif canImport(Darwin)
        var info = kinfo_proc()
        var size = MemoryLayout<kinfo_proc>.stride
        var name: [Int32] = [CTL_KERN, KERN_PROC, KERN_PROC_PID, processID]
        guard sysctl(&name, 4, &info, &size, nil, 0) == 0, size > 0 else { return nil }
        let start = info.kp_proc.p_un.__p_starttime
        return UInt64(start.tv_sec) * 1_000_000 + UInt64(start.tv_usec)
        #else
        return nil
        #endif
    }
}
