import Crypto
import ArgumentParser
import Foundation
import GarageLite
import GRDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct GarageBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "garage-bench",
        abstract: "Benchmarks GarageLite against raw SQLite (the floor) and plain GRDB records (the baseline).",
        discussion: """
            Each workload runs, in this process, through three implementations, each on a fresh \
            store in a fresh temporary directory (deleted afterwards):
              GarageLite  the library, as its README uses it;
              floor       JSONEncoder/JSONDecoder and SQLite's C API (prepared statements reused) on \
            an equivalent table with the same keys and sync index, WAL, synchronous=NORMAL, one \
            transaction per batch;
              GRDB        a Codable GRDB record with a JSON data column in a DatabasePool \
            (insert, fetchOne(key:), one write per batch).

            Workloads (the objects are people with an address, two dates and three tags, ~250 \
            bytes of JSON):
              parkAll of 100k flat objects in one call; 5k single parks with autosave; parkAll of \
            10k parents with 3 identifiable children each; retrieve 100k objects by identifier \
            in random order; retrieveAll of 100k objects; retrieve one parent with 100 \
            references; the sync query (count + retrieve the 100 .notSynced rows) in stores of \
            10k, 100k and 1M rows; claim/complete batches of 100 until 100k rows are synced; a \
            streaming read of 1M rows; claim/complete batches of 100 until 100k rows are uploaded, \
            10 % of them deletions (tombstones, purged when completed); parkDownloaded of 10k \
            objects, 10 % of which conflict with a local edit (kept), in one call.

            Model rows (named "model: …"; --filter model runs them alone): parkAll of 100k \
            objects in one call, retrieve of the 100k by identifier in a shuffled order, and retrieveAll \
            of 100k, for each of five models: an invoice (three dates under the default strategy, \
            a nested struct, custom coding keys, an array of strings), an event (dates as ISO 8601 \
            strings, every implementation's coders set so), a task (optionals, half of them nil, \
            and enums), a reading (arrays of doubles and of integers) and a profile (UUID, URL, \
            Decimal, Data, a dictionary, a set, an array of structs, an enum with payloads).

            Query workloads (rows named "query: …"; --filter query runs them alone), on stores of \
            10k and 1M notes (~254 bytes of JSON; quick: 2k and 20k), one notebook in N/300: \
            create a notebook index and a title index; retrieve the ~300 notes of one notebook \
            through the index, and (GarageLite only) through retrieveAll and a filter in Swift; \
            count them; retrieve the first 20 notes by title, and the first 20 of the notebook by \
            title. Each store is built once per implementation, untimed, and read by every query \
            row of its size. The floor and GRDB have the same two indexes, written by hand on \
            json_extract(data, '$.notebook') and '$.title'.

            Text rows (named "query: text: …"; --filter text runs them alone, --filter query with \
            the other query rows), on a store of 100k notes (quick: 10k): create a full-text index \
            of the title and body (GarageLite's textIndex; the floor an FTS5 table kept by \
            triggers; GRDB an FTS5 table synchronized with its table, through a generated column); \
            retrieve every note holding one rare word (~0.3 % of the notes); the 20 most relevant \
            notes for two words (BM25); 5k single parks (quick: 1k) with the text index, then \
            without it.

            The two sync cycle workloads (deletions, parkDownloaded) run the floor on a table \
            with GarageLite's format-3 schema (claims, tombstones, retries, the index of references) and the statements \
            GarageLite runs on it, in the same transactions. GRDB records have no tombstones, \
            so the deletions workload skips GRDB.

            The table on stdout gives operations per second, the ratios GarageLite/floor and \
            GarageLite/GRDB (above 1: GarageLite is faster) and the peak RSS of each timed cell; \
            progress goes to stderr. Data and random orders come from a seeded SplitMix64, so \
            every run does the same work. Run it in release: swift build -c release --product garage-bench. \
            With GARAGE_BENCH_DURABILITY=full every implementation syncs each commit (GarageLite's \
            .full durability, synchronous=FULL for the others).
            """)

    @Flag(help: "Smaller workloads (sync query on 10k and 100k rows only, streaming on 100k rows, query rows on 2k and 20k notes), one run per cell: under a minute.")
    var quick = false

    @Option(help: "Run only the workloads whose name contains this text (case-insensitive), e.g. \"sync\", \"retrieve\", \"park\", or ends with it when it ends with $ (\"random order$\"), or is matched whole when it holds * (\"model: task*retrieveAll*\"); \"query\" alone runs the query rows (\"query: …\"), not the sync query rows (\"sync query\"), \"text\" the text rows among them (\"query: text: …\"); repeat it for several.")
    var filter: [String] = []

    @Option(help: "Run only these implementations (GarageLite, floor, GRDB), e.g. to profile one: --only GarageLite.")
    var only: [String] = []

    @Option(help: ArgumentHelp("Build the query rows' stores in this directory and keep them (query-<size>-<implementation>.sqlite, text-<size>-<implementation>.sqlite for the text rows), to read their plans with sqlite3.", valueName: "directory"))
    var keepStores: String?

    /// The filters that name a group of rows: "query" runs the query rows only, "text" the
    /// text rows among them.
    private static let groups = ["query", "text"]

    private func implementations() throws -> [Implementation] {
        guard !only.isEmpty else { return Implementation.allCases }
        return try only.map { name in
            guard let implementation = Implementation.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }) else {
                throw ValidationError("Unknown implementation \(name): use GarageLite, floor or GRDB.")
            }
            return implementation
        }
    }

    func run() throws {
        let sizes = quick ? Sizes.quick : Sizes.full
        let started = ContinuousClock.now
        let filters = filter.filter { !$0.isEmpty }
        func selects(_ name: String, groups: [String]) -> Bool {
            filters.isEmpty || filters.contains { filter in
                // A group's name selects the group's rows, and no other.
                if Self.groups.contains(filter.lowercased()) { return groups.contains(filter.lowercased()) }
                // A filter with "*" is a pattern of the whole name: "model: task*retrieveAll*".
                if filter.contains("*") { return fnmatch(filter.lowercased(), name.lowercased(), 0) == 0 }
                // A filter ending with "$" matches the end of the name: "random order$" leaves out ", encrypted".
                return filter.hasSuffix("$") ? name.lowercased().hasSuffix(filter.dropLast().lowercased())
                    : name.localizedCaseInsensitiveContains(filter)
            }
        }
        let workloads = Workloads(sizes: sizes).all.filter { selects($0.name, groups: []) }
        let queryWorkloads = QueryWorkloads(sizes: sizes)
        let queryRows = queryWorkloads.all.filter { selects($0.name, groups: $0.groups) }
        guard !workloads.isEmpty || !queryRows.isEmpty else {
            throw ValidationError("No workload matches --filter \(filters.joined(separator: ", ")). Workloads: "
                                  + (Workloads(sizes: sizes).all.map(\.name) + queryWorkloads.all.map(\.name))
                                      .map { "\"\($0)\"" }.joined(separator: ", "))
        }

        let jsonSizes = try measureJSONSizes()
        let noteJSONSizes = queryRows.isEmpty ? nil : try measureNoteJSONSizes()
        var rows: [Row] = []
        for (number, workload) in workloads.enumerated() {
            progress("[\(number + 1)/\(workloads.count)] \(workload.name)")
            rows.append(workload.run(try implementations()))
        }
        if !queryRows.isEmpty {
            progress("[query] \(queryRows.count) query rows on stores of "
                     + Set(queryRows.map(\.storeSize)).sorted().map { "\(short($0)) notes" }.joined(separator: " and "))
            queryWorkloads.run(queryRows, try implementations(),
                               keepStores: keepStores.map { URL(fileURLWithPath: $0, isDirectory: true) }) { rows.append($0) }
        }
        let elapsed = (ContinuousClock.now - started).seconds

        print(Report(sizes: sizes, rows: rows, jsonSizes: jsonSizes, noteJSONSizes: noteJSONSizes, elapsed: elapsed).markdown,
              terminator: "")
        if workloads.contains(where: { $0.name.contains("encrypted") }) {
            let (median, slowest) = try measurePassphraseOpen()
            print(String(format: "\nOpening a store locked with a passphrase (PBKDF2-SHA256, %d rounds, the default): "
                         + "median %.0f ms, slowest %.0f ms of 5 opens.\n", StoreKey.defaultRounds, median, slowest))
        }
        progress(String(format: "done in %.1f s", elapsed))
    }

    /// What opening a store locked with a passphrase costs (the key derivation, mostly), in
    /// milliseconds: the median and slowest of 5 opens.
    private func measurePassphraseOpen() throws -> (median: Double, slowest: Double) {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("locked.sqlite").path
            let key = StoreKey.passphrase("correct horse battery staple")
            try Garage(path: path, encryptionKey: key).park(BenchData.people(0..<1)[0])
            var times: [Double] = []
            for _ in 0..<5 {
                let started = ContinuousClock.now
                _ = try Garage(path: path, encryptionKey: key)
                times.append((ContinuousClock.now - started).seconds * 1000)
            }
            times.sort()
            return (times[2], times[4])
        }
    }

    /// The average JSON size of a person, as JSONEncoder writes it (floor, GRDB) and as
    /// GarageLite stores it (without the sync status, which lives in its own column).
    private func measureJSONSizes() throws -> (foundation: Double, garageLite: Double) {
        try measureJSONSizes(BenchData.people(0..<1000))
    }

    /// The average JSON size of a note, as ``measureJSONSizes()`` measures a person's.
    private func measureNoteJSONSizes() throws -> (foundation: Double, garageLite: Double) {
        try measureJSONSizes(BenchData.notes(0..<1000, notebooks: 33))
    }

    private func measureJSONSizes<Object: Encodable>(_ objects: [Object]) throws -> (foundation: Double, garageLite: Double) {
        let encoder = JSONEncoder()
        let foundation = Double(try objects.reduce(0) { $0 + (try encoder.encode($1)).count }) / Double(objects.count)
        let garageLite = try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("size.sqlite").path
            let garage = try Garage(path: path)
            try garage.parkAll(objects)
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                try Double.fetchOne(db, sql: "SELECT avg(length(CAST(data AS BLOB))) FROM garage_object") ?? 0
            }
        }
        return (foundation, garageLite)
    }
}

// MARK: - Sizes

struct Sizes {
    var isQuick: Bool
    var flat: Int
    var singleParks: Int
    var teams: Int
    var retrieveByID: Int
    var retrieveAll: Int
    var parentReferences = 100
    var parentRepetitions: Int
    var syncStoreSizes: [Int]
    var syncNotSynced = 100
    var syncRepetitions: Int
    var claimRows: Int
    var claimBatch = 100
    /// In the deletions workload, one row to sync in this many is a deletion (10 %).
    var deletionEvery = 10
    var downloads: Int
    /// In the parkDownloaded workload, one object in this many has a local edit (10 %).
    var conflictEvery = 10
    var streamRows: Int
    /// count(withStatus:): the store's size (half .synced) and the counts timed.
    var countRows: Int
    var countRepetitions: Int
    /// setSyncStatus: the objects whose status is set, one commit each.
    var statusChanges: Int
    /// Timed runs of the read-only workloads (the best is kept); write workloads run once.
    var readRuns: Int
    /// Stores are built and large inputs generated in batches of this many objects.
    var buildBatch = 100_000
    /// The query workloads: their stores' sizes (notes), and about how many notes a notebook holds.
    var queryStoreSizes: [Int] = []
    var queryPerNotebook = 300
    /// The notes of a page sorted by title.
    var queryPageSize = 20
    /// A timed run of a query row repeats it this many times, or until this many seconds have passed.
    var queryRepetitions = 1_000
    var queryBudget = 1.0
    /// The text rows: their stores' sizes (notes), and the single parks with and without the text index.
    var textStoreSizes: [Int] = []
    var textParks = 0

    static let full = Sizes(
        isQuick: false, flat: 100_000, singleParks: 5_000, teams: 10_000, retrieveByID: 100_000,
        retrieveAll: 100_000, parentRepetitions: 2_000, syncStoreSizes: [10_000, 100_000, 1_000_000],
        syncRepetitions: 1_000, claimRows: 100_000, downloads: 10_000, streamRows: 1_000_000,
        countRows: 1_000_000, countRepetitions: 20, statusChanges: 5_000, readRuns: 2,
        queryStoreSizes: [10_000, 1_000_000], textStoreSizes: [100_000], textParks: 5_000)

    static let quick = Sizes(
        isQuick: true, flat: 20_000, singleParks: 1_000, teams: 2_000, retrieveByID: 20_000,
        retrieveAll: 20_000, parentRepetitions: 200, syncStoreSizes: [10_000, 100_000],
        syncRepetitions: 200, claimRows: 10_000, downloads: 2_000, streamRows: 100_000,
        countRows: 100_000, countRepetitions: 20, statusChanges: 1_000, readRuns: 1,
        queryStoreSizes: [2_000, 20_000], queryBudget: 0.5, textStoreSizes: [10_000], textParks: 1_000)
}

/// 100000 → "100k", 1000000 → "1M".
func short(_ n: Int) -> String {
    if n >= 1_000_000, n % 1_000_000 == 0 { return "\(n / 1_000_000)M" }
    if n >= 1_000, n % 1_000 == 0 { return "\(n / 1_000)k" }
    return "\(n)"
}

// MARK: - Cells and rows

struct Cell {
    var opsPerSecond: Double
    /// Seconds of the run kept.
    var seconds: Double
    var peakMB: Double
}

struct Row {
    var name: String
    var unit: String
    /// For the sync query rows: the store's size.
    var syncStoreSize: Int?
    /// For the query rows: what the row does, and the store's size.
    var query: (kind: QueryKind, storeSize: Int)?
    var cells: [Implementation: Result<Cell, any Error>] = [:]

    func opsPerSecond(_ implementation: Implementation) -> Double? {
        try? cells[implementation]?.get().opsPerSecond
    }
}

struct Workload {
    var name: String
    var unit: String
    /// Timed runs kept best-of; 1 for workloads that change the store.
    var runs: Int
    /// The implementations that run it (`nil`: every one); the others' cells read "–".
    var implementations: [Implementation]? = nil
    /// Prepares a fresh store (not timed).
    var setup: (any Contender) throws -> Void
    /// The timed part; returns how many operations it did.
    var timed: (any Contender) throws -> Int
    /// Checks the store afterwards (not timed, not in the peak).
    var verify: (any Contender) throws -> Void = { _ in }
    /// Generates shared inputs before the cells run, and drops them afterwards.
    var prepareInputs: () -> Void = {}
    var dropInputs: () -> Void = {}
    /// For the sync query workloads: the store's size.
    var syncStoreSize: Int?

    func run(_ implementations: [Implementation]) -> Row {
        var row = Row(name: name, unit: unit, syncStoreSize: syncStoreSize)
        prepareInputs()
        defer { dropInputs() }
        for implementation in implementations where self.implementations?.contains(implementation) ?? true {
            do {
                let cell = try measure(implementation)
                row.cells[implementation] = .success(cell)
                let label = implementation.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                progress(String(format: "    %@ %10.0f %@ (%.2f s), peak RSS %.0f MB",
                                label, cell.opsPerSecond, unit, cell.seconds, cell.peakMB))
            } catch {
                row.cells[implementation] = .failure(error)
                progress("    \(implementation.rawValue) FAILED: \(error)")
            }
        }
        return row
    }

    private func measure(_ implementation: Implementation) throws -> Cell {
        try withTemporaryDirectory { directory in
            let contender = try implementation.open(path: directory.appendingPathComponent("store.sqlite").path)
            defer { try? contender.close() }
            try setup(contender)
            Memory.resetPeak()
            var best: Cell?
            for _ in 0..<runs {
                let start = ContinuousClock.now
                let operations = try timed(contender)
                let seconds = (ContinuousClock.now - start).seconds
                let opsPerSecond = Double(operations) / seconds
                if best == nil || opsPerSecond > best!.opsPerSecond {
                    best = Cell(opsPerSecond: opsPerSecond, seconds: seconds, peakMB: 0)
                }
            }
            best!.peakMB = Memory.peakMB()
            try verify(contender)
            return best!
        }
    }
}

/// Holds a workload's shared input between `prepareInputs` and `dropInputs`.
final class Input<Value> {
    private var value: Value?
    func set(_ newValue: Value?) { value = newValue }
    func get() throws -> Value {
        guard let value else { throw BenchFailure("input not prepared") }
        return value
    }
}

// MARK: - Workloads

struct Workloads {
    var sizes: Sizes

    /// Parks people `0..<count` in batches, with `status(i)` for person `i`.
    func build(_ contender: any Contender, count: Int, status: @escaping (Int) -> SyncStatus = { _ in .notSynced }) throws {
        var start = 0
        while start < count {
            let end = min(start + sizes.buildBatch, count)
            try contender.parkAll(BenchData.people(start..<end, status: status))
            start = end
        }
    }

    var all: [Workload] {
        var workloads = [parkAllFlat, parkAllFlatEncrypted, singleParks, parkAllTeams, retrieveByID, retrieveByIDEncrypted,
                         retrieveAll, retrieveAllEncrypted, retrieveParent]
        workloads += sizes.syncStoreSizes.map(syncQuery)
        workloads += [countWithStatus, setSyncStatus, claimComplete, stream, claimCompleteDeletions, parkDownloaded]
        workloads += modelRows
        return workloads
    }

    var parkAllFlat: Workload {
        let n = sizes.flat
        let people = Input<[BenchPerson]>()
        return Workload(
            name: "parkAll \(short(n)) flat objects, one call", unit: "objects/s", runs: 1,
            setup: { _ in },
            timed: { try $0.parkAll(people.get()); return n },
            verify: { let count = try $0.countNotSynced(); try expect(count == n, "parked \(count) of \(n)") },
            prepareInputs: { people.set(BenchData.people(0..<n)) },
            dropInputs: { people.set(nil) })
    }

    /// The key of the encrypted workloads.
    static let benchKey = SymmetricKey(data: Data(repeating: 0x42, count: 32))

    /// `workload` with every object encrypted (AES-256-GCM, bound to its row), for GarageLite and
    /// the floor: compare with the same row unencrypted.
    private func encrypted(_ workload: Workload) -> Workload {
        var encrypted = workload
        encrypted.name = workload.name.replacingOccurrences(of: " (", with: ", encrypted (")
        if encrypted.name == workload.name { encrypted.name += ", encrypted" }
        encrypted.implementations = [.garageLite, .floor]
        let setup = workload.setup
        encrypted.setup = { contender in
            try contender.encrypt(with: Self.benchKey)
            try setup(contender)
        }
        return encrypted
    }

    var parkAllFlatEncrypted: Workload { encrypted(parkAllFlat) }
    var retrieveByIDEncrypted: Workload { encrypted(retrieveByID) }
    var retrieveAllEncrypted: Workload { encrypted(retrieveAll) }

    var singleParks: Workload {
        let n = sizes.singleParks
        let people = Input<[BenchPerson]>()
        return Workload(
            name: "\(short(n)) single parks, autosave (one commit each)", unit: "parks/s", runs: 1,
            setup: { _ in },
            timed: { contender in
                for person in try people.get() { try contender.park(person) }
                return n
            },
            verify: { let count = try $0.countNotSynced(); try expect(count == n, "parked \(count) of \(n)") },
            prepareInputs: { people.set(BenchData.people(0..<n)) },
            dropInputs: { people.set(nil) })
    }

    var parkAllTeams: Workload {
        let n = sizes.teams
        let teams = Input<[BenchTeam]>()
        return Workload(
            name: "parkAll \(short(n)) parents × 3 identifiable children, one call", unit: "parents/s", runs: 1,
            setup: { _ in },
            timed: { try $0.parkAll(teams: teams.get()); return n },
            verify: { contender in
                let count = try contender.countNotSynced()
                try expect(count == 3 * n, "parked \(count) children of \(3 * n)")
                let team = try contender.retrieveTeam(id: BenchData.identifier("t", n - 1))
                try expect(team?.members.count == 3, "last team has \(team?.members.count ?? -1) members")
            },
            prepareInputs: { teams.set(BenchData.teams(0..<n, memberCount: 3)) },
            dropInputs: { teams.set(nil) })
    }

    var retrieveByID: Workload {
        let n = sizes.retrieveByID
        let identifiers = Input<[String]>()
        return Workload(
            name: "retrieve \(short(n)) objects by identifier, random order", unit: "objects/s", runs: sizes.readRuns,
            setup: { try build($0, count: n) },
            timed: { contender in
                for id in try identifiers.get() {
                    guard try contender.retrieve(id: id) != nil else { throw BenchFailure("\(id) not found") }
                }
                return n
            },
            prepareInputs: {
                var rng = SplitMix64(seed: BenchData.seed)
                var ids = (0..<n).map { BenchData.identifier("p", $0) }
                ids.shuffle(using: &rng)
                identifiers.set(ids)
            },
            dropInputs: { identifiers.set(nil) })
    }

    var retrieveAll: Workload {
        let n = sizes.retrieveAll
        return Workload(
            name: "retrieveAll \(short(n)) objects", unit: "objects/s", runs: sizes.readRuns,
            setup: { try build($0, count: n) },
            timed: { contender in
                let count = try contender.retrieveAll().count
                try expect(count == n, "retrieved \(count) of \(n)")
                return n
            })
    }

    var retrieveParent: Workload {
        let k = sizes.parentRepetitions
        let references = sizes.parentReferences
        let teamID = BenchData.identifier("t", 0)
        return Workload(
            name: "retrieve 1 parent with \(references) references (×\(short(k)))", unit: "parents/s",
            runs: sizes.readRuns,
            setup: { try $0.parkAll(teams: BenchData.teams(0..<1, memberCount: references)) },
            timed: { contender in
                for _ in 0..<k {
                    let team = try contender.retrieveTeam(id: teamID)
                    try expect(team?.members.count == references, "team has \(team?.members.count ?? -1) members")
                }
                return k
            })
    }

    func syncQuery(storeSize n: Int) -> Workload {
        let k = sizes.syncRepetitions
        let pending = sizes.syncNotSynced
        let stride = n / pending
        var workload = Workload(
            name: "sync query, \(short(n)) rows: count + retrieve the \(pending) .notSynced (×\(short(k)))",
            unit: "queries/s", runs: sizes.readRuns,
            setup: { try build($0, count: n, status: { $0 % stride == 0 ? .notSynced : .synced }) },
            timed: { contender in
                for _ in 0..<k {
                    let count = try contender.countNotSynced()
                    let people = try contender.retrieveNotSynced()
                    try expect(count == pending && people.count == pending,
                               "count \(count), retrieved \(people.count), expected \(pending)")
                }
                return k
            })
        workload.syncStoreSize = n
        return workload
    }

    var countWithStatus: Workload {
        let n = sizes.countRows
        let k = sizes.countRepetitions
        return Workload(
            name: "count(withStatus:), \(short(n)) rows, half .synced: count the .synced (×\(k))", unit: "counts/s",
            runs: sizes.readRuns,
            setup: { try build($0, count: n, status: { $0 % 2 == 0 ? .synced : .notSynced }) },
            timed: { contender in
                for _ in 0..<k {
                    let count = try contender.count(status: .synced)
                    try expect(count == n / 2, "counted \(count), expected \(n / 2)")
                }
                return k
            })
    }

    var setSyncStatus: Workload {
        let n = sizes.statusChanges
        return Workload(
            name: "setSyncStatus of \(short(n)) objects, one commit each", unit: "objects/s", runs: 1,
            setup: { try build($0, count: n) },
            timed: { contender in
                for person in BenchData.people(0..<n) { try contender.setStatus(.synced, of: person) }
                return n
            },
            verify: { let synced = try $0.count(status: .synced); try expect(synced == n, "\(synced) of \(n) .synced") })
    }

    var claimComplete: Workload {
        let n = sizes.claimRows
        let batch = sizes.claimBatch
        return Workload(
            name: "claim/complete batches of \(batch) until \(short(n)) rows are synced", unit: "rows/s", runs: 1,
            setup: { try build($0, count: n) },
            timed: { contender in
                var synced = 0
                while true {
                    let done = try contender.claimAndComplete(limit: batch)
                    if done == 0 { break }
                    synced += done
                }
                try expect(synced == n, "synced \(synced) of \(n)")
                return n
            },
            verify: { let left = try $0.countNotSynced(); try expect(left == 0, "\(left) rows left .notSynced") })
    }

    var stream: Workload {
        let n = sizes.streamRows
        return Workload(
            name: "streaming read of \(short(n)) rows (visit each object once)", unit: "objects/s", runs: 1,
            setup: { try build($0, count: n) },
            timed: { contender in
                var count = 0
                var tags = 0
                try contender.forEachPerson { person in
                    count += 1
                    tags &+= person.tags.count
                }
                try expect(count == n && tags == 3 * n, "visited \(count) of \(n)")
                return n
            })
    }

    // MARK: Sync cycle

    /// A claim/complete cycle where one row to sync in `deletionEvery` is a deletion.
    var claimCompleteDeletions: Workload {
        let n = sizes.claimRows
        let batch = sizes.claimBatch
        let every = sizes.deletionEvery
        let deletions = (n + every - 1) / every
        let objects = n - deletions
        return Workload(
            name: "claim/complete batches of \(batch) until \(short(n)) rows are uploaded, \(100 / every) % of them deletions",
            unit: "rows/s", runs: 1, implementations: [.garageLite, .floor],
            setup: { contender in
                // A batch at a time: parks people, one in `every` as .synced (on the server), the
                // others .notSynced; then deletes the synced ones, which become tombstones. In
                // claim order (oldest change first), each batch of `batch` mixes the objects of
                // one such step and its deletions.
                var start = 0
                while start < n {
                    let end = min(start + batch, n)
                    let people = BenchData.people(start..<end, status: { $0 % every == 0 ? .synced : .notSynced })
                    try contender.parkAllForSync(people)
                    try contender.delete(ids: people.filter { $0.syncStatus == .synced }.map(\.id))
                    start = end
                }
                let counts = try contender.syncCounts()
                try expect(counts == SyncCounts(rows: n, tombstones: deletions, notSynced: objects),
                           "setup: \(counts)")
            },
            timed: { contender in
                var total = ClaimCounts()
                var batches = 0
                var mixed = 0
                while true {
                    let done = try contender.claimAndCompleteWithDeletions(limit: batch)
                    if done.isEmpty { break }
                    total += done
                    batches += 1
                    if done.objects > 0, done.deletions > 0 { mixed += 1 }
                    // A claim that completes nothing would be claimed again forever.
                    try expect(batches <= (n + batch - 1) / batch, "more than \(batches - 1) batches: \(total)")
                }
                let expected = ClaimCounts(objects: objects, tags: 3 * objects, deletions: deletions,
                                           synced: objects, deletionsUploaded: deletions)
                try expect(total == expected && batches == (n + batch - 1) / batch && mixed == batches,
                           "\(batches) batches (\(mixed) with objects and deletions): \(total); expected \(expected)")
                return n
            },
            verify: { contender in
                let counts = try contender.syncCounts()
                try expect(counts == SyncCounts(rows: objects, synced: objects), "after: \(counts)")
            })
    }

    /// A download of `downloads` people into a store that holds some of them: one in
    /// `conflictEvery` with a local edit, half the others `.synced`; the rest are new.
    var parkDownloaded: Workload {
        let n = sizes.downloads
        let every = sizes.conflictEvery
        /// Person `i`'s local version, if the store has one.
        func local(_ i: Int) -> BenchPerson? {
            let slot = i % every
            guard slot <= every / 2 else { return nil }
            return BenchData.person(i, status: slot == 0 ? .notSynced : .synced)
        }
        let conflicts = (0..<n).filter { $0 % every == 0 }.count
        let existing = (0..<n).filter { local($0) != nil }.count
        let downloads = Input<[BenchPerson]>()
        return Workload(
            name: "parkDownloaded \(short(n)) objects, \(100 / every) % local edits kept (.keepLocal), one call",
            unit: "objects/s", runs: 1,
            setup: { contender in
                try contender.parkAllForSync((0..<n).compactMap(local))
                let counts = try contender.syncCounts()
                try expect(counts == SyncCounts(rows: existing, notSynced: conflicts, synced: existing - conflicts),
                           "setup: \(counts)")
            },
            timed: { contender in
                let counts = try contender.parkDownloaded(downloads.get())
                try expect(counts == DownloadCounts(applied: n - conflicts, keptLocal: conflicts), "\(counts)")
                return n
            },
            verify: { contender in
                let counts = try contender.syncCounts()
                try expect(counts == SyncCounts(rows: n, notSynced: conflicts, synced: n - conflicts), "after: \(counts)")
                // Every object: a local edit kept, or the download written.
                for i in 0..<n {
                    let stored = try contender.retrieveForSync(id: BenchData.identifier("p", i))
                    let expected = local(i)?.syncStatus == .notSynced ? BenchData.person(i) : BenchData.downloaded(i)
                    try expect(stored?.email == expected.email && stored?.syncStatus == expected.syncStatus,
                               "person \(i): \(stored.map { "\($0.email) \($0.syncStatus)" } ?? "missing"), "
                               + "expected \(expected.email) \(expected.syncStatus)")
                }
            },
            prepareInputs: { downloads.set((0..<n).map(BenchData.downloaded)) },
            dropInputs: { downloads.set(nil) })
    }
}

// MARK: - Report

struct Report {
    var sizes: Sizes
    var rows: [Row]
    var jsonSizes: (foundation: Double, garageLite: Double)
    /// When the query rows ran.
    var noteJSONSizes: (foundation: Double, garageLite: Double)?
    var elapsed: Double

    var markdown: String {
        var out = "# garage-bench\n\n"
        out += "- date: \(Date().formatted(.iso8601))\n"
        out += "- system: \(unameDescription) — \(ProcessInfo.processInfo.operatingSystemVersionString)\n"
        out += "- cores: \(ProcessInfo.processInfo.activeProcessorCount) active (\(ProcessInfo.processInfo.processorCount) total)\n"
        #if DEBUG
        out += "- build: DEBUG — numbers are meaningless, build with -c release\n"
        #else
        out += "- build: release\n"
        #endif
        if sizes.isQuick {
            out += "- mode: quick — smaller workloads; sync query on 10k and 100k rows only (not 1M); "
                + "streaming on \(short(sizes.streamRows)) rows (not 1M); query rows on "
                + sizes.queryStoreSizes.map(short).joined(separator: " and ") + " notes; one timed run per cell\n"
        } else {
            out += "- mode: full — read-only workloads: best of \(sizes.readRuns) runs on the same store; "
                + "workloads that write: one run on a fresh store\n"
        }
        if rows.contains(where: { $0.query != nil }) {
            out += String(format: "- query rows: each timed run repeats the query up to %d times or for %.1f s, "
                          + "after an untimed warm-up; one store per size and implementation, built untimed\n",
                          sizes.queryRepetitions, sizes.queryBudget)
        }
        out += String(format: "- person JSON: %.0f bytes on average (JSONEncoder: floor, GRDB), %.0f bytes (as GarageLite stores it)\n",
                      jsonSizes.foundation, jsonSizes.garageLite)
        if let noteJSONSizes {
            out += String(format: "- note JSON (query rows): %.0f bytes on average (JSONEncoder: floor, GRDB), %.0f bytes (as GarageLite stores it)\n",
                          noteJSONSizes.foundation, noteJSONSizes.garageLite)
        }
        out += "- peak RSS: \(Memory.method)\n"
        out += "- ratios: GarageLite ops/s ÷ other ops/s; above 1 = GarageLite is faster\n\n"

        out += "| workload | GarageLite ops/s | floor ops/s | GRDB ops/s | GL/floor | GL/GRDB | peak RSS MB (GL / floor / GRDB) |\n"
        out += "|---|---:|---:|---:|---:|---:|---:|\n"
        for row in rows {
            let ops = Implementation.allCases.map { implementation -> String in
                switch row.cells[implementation] {
                case .success(let cell)?: return formatted(cell.opsPerSecond)
                case .failure?: return "failed"
                case nil: return "–"
                }
            }
            let rss = Implementation.allCases.map { implementation -> String in
                (try? row.cells[implementation]?.get()).map { String(format: "%.0f", $0.peakMB) } ?? "–"
            }
            out += "| \(row.name) (\(row.unit)) | \(ops[0]) | \(ops[1]) | \(ops[2]) "
                + "| \(ratio(row, .floor)) | \(ratio(row, .grdb)) | \(rss.joined(separator: " / ")) |\n"
        }

        let syncRows = rows.compactMap { row in row.syncStoreSize.map { ($0, row) } }
        if let smallest = syncRows.first, let largest = syncRows.last, smallest.0 != largest.0 {
            let parts = Implementation.allCases.map { implementation -> String in
                guard let small = smallest.1.opsPerSecond(implementation),
                      let large = largest.1.opsPerSecond(implementation) else { return "\(implementation.rawValue) –" }
                return String(format: "%@ %.2f", implementation.rawValue, small / large)
            }
            out += "\nSync query time(\(short(largest.0)))/time(\(short(smallest.0))) (1 = independent of store size): "
                + parts.joined(separator: ", ") + "\n"
        }

        // Each query row's time per query at its largest store ÷ at its smallest.
        var queryLines: [String] = []
        for kind in QueryKind.allCases where kind != .createIndexes {
            let sized = rows.compactMap { row in row.query.flatMap { $0.kind == kind ? ($0.storeSize, row) : nil } }
            guard let smallest = sized.min(by: { $0.0 < $1.0 }), let largest = sized.max(by: { $0.0 < $1.0 }),
                  smallest.0 != largest.0 else { continue }
            let parts = Implementation.allCases.compactMap { implementation -> String? in
                guard let small = smallest.1.opsPerSecond(implementation),
                      let large = largest.1.opsPerSecond(implementation) else { return nil }
                return String(format: "%@ %.2f", implementation.rawValue, small / large)
            }
            queryLines.append("- \(kind.rawValue), time(\(short(largest.0)))/time(\(short(smallest.0))): "
                              + parts.joined(separator: ", "))
        }
        if !queryLines.isEmpty {
            out += "\nQuery time per query at the largest store ÷ at the smallest (1 = independent of store size):\n"
                + queryLines.joined(separator: "\n") + "\n"
        }

        let failures = rows.flatMap { row in
            Implementation.allCases.compactMap { implementation -> String? in
                if case .failure(let error)? = row.cells[implementation] {
                    return "- \(row.name), \(implementation.rawValue): \(error)"
                }
                return nil
            }
        }
        if !failures.isEmpty {
            out += "\nFailures:\n" + failures.joined(separator: "\n") + "\n"
        }
        out += String(format: "\nTotal wall time: %.1f s\n", elapsed)
        return out
    }

    private func ratio(_ row: Row, _ other: Implementation) -> String {
        guard let garageLite = row.opsPerSecond(.garageLite), let value = row.opsPerSecond(other), value > 0 else {
            return "–"
        }
        return String(format: "%.2f", garageLite / value)
    }

    private func formatted(_ value: Double) -> String {
        // Below 100 operations a second (a query that reads every row), two significant digits at least.
        if value < 10 { return String(format: "%.2f", value) }
        if value < 100 { return String(format: "%.1f", value) }
        let digits = String(Int(value.rounded()))
        var out = ""
        for (index, character) in digits.reversed().enumerated() {
            if index > 0, index % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return String(out.reversed())
    }

    /// `uname -srm`.
    private var unameDescription: String {
        var info = utsname()
        guard uname(&info) == 0 else { return "unknown" }
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return "\(field(info.sysname)) \(field(info.release)) \(field(info.machine))"
    }
}
