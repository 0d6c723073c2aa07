import ArgumentParser
import Foundation

/// `garage-bench-postgres`: the bench (``Bench``, the default subcommand), and the worker
/// processes it launches (``Worker``, hidden).
@main
struct GarageBenchPostgres: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "garage-bench-postgres",
        abstract: "Benchmarks GarageLite on PostgreSQL against postgres-nio with hand-written statements (the floor).",
        subcommands: [Bench.self, Worker.self],
        defaultSubcommand: Bench.self)
}

/// The bench: every workload through both contenders, then the table.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Times GarageLite and the floor on the same PostgreSQL server and prints a markdown table.",
        discussion: """
            Each workload runs through two contenders, each on a fresh schema of the server (made \
            for the run, dropped after it):
              GarageLite  the library's public API on Garage(postgresURL:);
              floor       postgres-nio with hand-written statements, Foundation's JSONEncoder and \
            JSONDecoder, on GarageLite's own table (the schema a Garage creates: same columns, \
            indexes and triggers), named prepared statements, parkAll as multi-row upserts in one \
            transaction, a claim as one UPDATE … FOR UPDATE SKIP LOCKED … RETURNING and its \
            completion as one UPDATE by primary key.

            Workloads (notes of ~330 bytes of JSON: a title, a ~200-byte body, three tags, a date):
            parkAll of 10k notes in one call; 10k retrieves by identifier in random order; \
            retrieveAll of 10k notes; claim/complete batches of 50 until 10k rows are synced, by \
            1, 2, 4 and 8 worker processes (this executable again, started together behind a \
            barrier, timed until the last one exits). --quick uses 1k notes.

            The fast rows report the median of several runs, the claim rows of 3 (1 with --quick), \
            with the CPU the client and the server spent in the median run (the server's is read \
            from /proc when it runs on this machine). Then a counting pass, untimed, runs each \
            workload again through a relay that counts the round trips and statements each \
            contender sends. Progress goes to stderr, the report to stdout.

            Run it in release, against a throwaway server: \
            .ci/with-postgres swift run -c release garage-bench-postgres
            """)

    @Flag(help: "1k notes instead of 10k, and fewer runs: under a minute.")
    var quick = false

    @Option(help: "The server's postgres:// URL (sslmode=disable); GARAGE_POSTGRES_URL by default.")
    var url: String?

    @Option(help: "Run only the workloads whose name contains this text (parkAll, retrieve, retrieveAll, claim); repeat it for several.")
    var filter: [String] = []

    @Flag(inversion: .prefixedNo, help: "Count the round trips and statements of each workload (an untimed pass through a relay).")
    var roundTrips = true

    func run() async throws {
        guard let url = url ?? ProcessInfo.processInfo.environment["GARAGE_POSTGRES_URL"] else {
            throw ValidationError("No server: pass --url postgres://… or set GARAGE_POSTGRES_URL (.ci/with-postgres sets it).")
        }
        let server = try ServerAddress(url: url)
        let sizes = quick ? Sizes.quick : Sizes.full
        let started = ContinuousClock.now
        var bench = try await Workloads(server: server, sizes: sizes, filter: filter)
        let machine = try await bench.describeMachine()
        progress("PostgreSQL at \(server.url); \(machine.summary)")
        let rows = try await bench.timedRows()
        let counts = roundTrips ? try await bench.countedRows() : []
        await bench.finish()
        let report = Report(sizes: sizes, machine: machine, rows: rows, counts: counts,
                            elapsed: (ContinuousClock.now - started).seconds)
        print(report.markdown, terminator: "")
    }
}

/// How much work each workload does.
struct Sizes: Sendable {
    var isQuick: Bool
    /// Notes parked, retrieved, and claimed.
    var notes: Int
    /// Timed runs of parkAll, retrieve and retrieveAll (the median is kept).
    var fastRepetitions: Int
    /// Timed runs of each claim/complete row.
    var claimRepetitions: Int
    var workerCounts = [1, 2, 4, 8]
    var claimBatch = 50
    /// Notes of the counting pass (round trips per operation don't depend on it, but for
    /// parkAll's batches and retrieveAll's pages).
    var countedNotes: Int

    static let full = Sizes(isQuick: false, notes: 10_000, fastRepetitions: 5, claimRepetitions: 3, countedNotes: 10_000)
    static let quick = Sizes(isQuick: true, notes: 1_000, fastRepetitions: 3, claimRepetitions: 1, countedNotes: 1_000)
}

/// 10000 → "10k".
func short(_ n: Int) -> String {
    n >= 1_000 && n % 1_000 == 0 ? "\(n / 1_000)k" : "\(n)"
}
