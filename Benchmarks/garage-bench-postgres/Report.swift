import Foundation

/// The machine and the server a run measured, for the report's header.
struct Machine: Sendable {
    var serverVersion: String
    /// Settings of the server that move the numbers (`fsync=off`…).
    var settings: [String]
    /// Whether the server runs on this machine (its CPU is then measured, and shares the cores).
    var isLocal: Bool
    var date = Date()
    var cores = ProcessInfo.processInfo.activeProcessorCount
    /// The load average when the bench started (the machine may be shared).
    var load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
        .split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    var system: String = {
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }?
            .dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) ?? ""
        let kernel = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return ["Linux \(kernel)", release].filter { !$0.isEmpty }.joined(separator: ", ")
    }()

    var summary: String {
        let place = isLocal ? "on this machine, sharing its cores" : "on another machine (its CPU is not measured)"
        return "PostgreSQL \(serverVersion) (\(settings.joined(separator: ", "))) \(place); \(system), \(cores) cores, "
            + "load average \(load) at the start"
    }
}

/// The markdown report: the table, the scaling of claims, and where the time goes.
struct Report {
    var sizes: Sizes
    var machine: Machine
    var rows: [ResultRow]
    var counts: [CountedRow]
    var elapsed: Double

    var markdown: String {
        var text = ""
        let date = ISO8601DateFormatter().string(from: machine.date)
        text += "## garage-bench-postgres\(sizes.isQuick ? " --quick" : ""), \(date), \(String(format: "%.0f", elapsed)) s\n\n"
        text += machine.summary + ". Release build; median of \(sizes.fastRepetitions) runs for parkAll and the reads, of "
            + "\(sizes.claimRepetitions) for each claim row; each run on a fresh schema. Ratios above 1: GarageLite is faster.\n\n"
        text += "| workload | GarageLite | floor | GarageLite ÷ floor | within 1.2× of the floor |\n|---|---:|---:|---:|:---:|\n"
        for row in rows {
            let garage = row.median(.garageLite)?.opsPerSecond
            let floor = row.median(.floor)?.opsPerSecond
            let ratio = garage.flatMap { g in floor.map { g / $0 } }
            text += "| \(row.name) (\(row.unit)) | \(Self.integer(garage)) | \(Self.integer(floor)) | "
                + "\(ratio.map { String(format: "%.2f", $0) } ?? "–") | \(ratio.map { $0 >= 1 / 1.2 ? "yes" : "no" } ?? "–") |\n"
        }
        text += scaling
        text += timeSpent
        text += roundTrips
        return text
    }

    /// Claim/complete throughput with n workers ÷ with one.
    private var scaling: String {
        let claimRows = rows.filter { $0.workers != nil }
        guard let one = claimRows.first(where: { $0.workers == 1 }), claimRows.count > 1 else { return "" }
        var text = "\nClaim/complete throughput with n worker processes ÷ with 1 (target: ≥ 1.6 with 4):\n\n"
        text += "| workers | GarageLite | floor |\n|---:|---:|---:|\n"
        for row in claimRows {
            let cells = ContenderKind.allCases.map { kind -> String in
                guard let base = one.median(kind)?.opsPerSecond, let rate = row.median(kind)?.opsPerSecond else { return "–" }
                return String(format: "%.2f", rate / base)
            }
            text += "| \(row.workers ?? 0) | \(cells.joined(separator: " | ")) |\n"
        }
        return text
    }

    /// Per operation, in each median run: wall time and CPU of the client and the server.
    private var timeSpent: String {
        var text = "\nWhere the time goes, per operation of the median run, in µs: the wall time; the CPU of the client "
            + "(this process, or the sum of the worker processes) and of the server (every process of the cluster); for the "
            + "claim rows, per row, over every worker. The spread is (slowest − fastest) ÷ median of the runs' wall times.\n\n"
        text += "| workload | contender | wall | client CPU | server CPU | spread |\n|---|---|---:|---:|---:|---:|\n"
        for row in rows {
            for kind in ContenderKind.allCases {
                guard let run = row.median(kind) else { continue }
                let perOperation = 1e6 / Double(run.operations)
                text += "| \(row.name) | \(kind.rawValue) | \(String(format: "%.1f", run.seconds * perOperation)) | "
                    + "\(String(format: "%.1f", run.clientCPU * perOperation)) | "
                    + "\(run.serverCPU.map { String(format: "%.1f", $0 * perOperation) } ?? "–") | \(Self.spread(row.runs[kind] ?? [])) |\n"
            }
        }
        return text
    }

    /// The counting pass: round trips and statements per operation.
    private var roundTrips: String {
        guard !counts.isEmpty else { return "" }
        var text = "\nRound trips per operation, and the time the server took to answer them (µs per operation, from each "
            + "round trip's last message to the server's ReadyForQuery, as the relay sees it), in the counting pass: the same "
            + "work, untimed, through a relay that reads the messages each contender sends (the claim rows from the barrier "
            + "to the workers' exit):\n\n"
        text += "| workload | per | GarageLite round trips | floor round trips | GarageLite server µs | floor server µs |\n"
        text += "|---|---|---:|---:|---:|---:|\n"
        for row in counts {
            let trips = ContenderKind.allCases.map { kind in
                row.counts[kind].map { String(format: "%.3f", Double($0.roundTrips) / Double(row.operations)) } ?? "–"
            }
            let server = ContenderKind.allCases.map { kind in
                row.counts[kind].map {
                    String(format: "%.1f", Double($0.serverNanoseconds.values.reduce(0, +)) / 1e3 / Double(row.operations))
                } ?? "–"
            }
            text += "| \(row.name) | \(row.operation) | \((trips + server).joined(separator: " | ")) |\n"
        }
        text += "\nStatements per operation in the counting pass: executions per operation × the server's mean answer "
            + "in µs (`S` is the run's schema; `prepare` is a named statement's preparation):\n"
        for row in counts {
            for kind in ContenderKind.allCases {
                guard let counts = row.counts[kind] else { continue }
                text += "\n- \(row.name), \(kind.rawValue), per \(row.operation):\n"
                let sorted = counts.executions.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
                for (statement, count) in sorted.prefix(8) {
                    let mean = counts.serverNanoseconds[statement].map { String(format: " × %.0f µs", Double($0) / 1e3 / Double(count)) }
                    text += "  - \(String(format: "%.3f", Double(count) / Double(row.operations)))\(mean ?? "") `\(statement)`\n"
                }
                if sorted.count > 8 {
                    let others = sorted.dropFirst(8).reduce(0) { $0 + $1.value }
                    text += "  - \(String(format: "%.3f", Double(others) / Double(row.operations))) in \(sorted.count - 8) other statements\n"
                }
            }
        }
        return text
    }

    /// How far apart the runs' wall times are, relative to their median: "12 %".
    private static func spread(_ runs: [Run]) -> String {
        guard runs.count > 1, let median = runs.median else { return "–" }
        let times = runs.map(\.seconds)
        return String(format: "%.0f %%", ((times.max() ?? 0) - (times.min() ?? 0)) / median.seconds * 100)
    }

    /// 12345.6 → "12,346".
    private static func integer(_ value: Double?) -> String {
        guard let value else { return "–" }
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value.rounded())) ?? String(Int(value))
    }
}
