import Foundation
import GarageLite
import PostgresNIO

/// A row of the table: one workload's timed runs, by contender.
struct ResultRow: Sendable {
    var name: String
    /// What its throughput counts: "objects/s", "rows/s".
    var unit: String
    /// For the claim rows: how many worker processes.
    var workers: Int?
    var runs: [ContenderKind: [Run]] = [:]

    func median(_ kind: ContenderKind) -> Run? { runs[kind]?.median }
}

/// A row of the counting pass: the round trips and statements of one workload, by contender.
struct CountedRow: Sendable {
    var name: String
    /// What one operation is ("object", "retrieve", "call", "row").
    var operation: String
    var operations: Int
    var counts: [ContenderKind: ProtocolCounts] = [:]
}

/// The workloads, on one server: each run on a fresh schema, dropped afterwards.
struct Workloads {
    let server: ServerAddress
    let sizes: Sizes
    let filter: [String]
    private let admin: Admin
    private var schemas = Schemas()
    /// The server's postmaster when it runs on this machine, for its CPU time.
    private let postmaster: Int32?
    /// The contenders in the order each repetition runs them (they alternate, so that a
    /// slow moment of this shared machine falls on both).
    let kinds = ContenderKind.allCases

    init(server: ServerAddress, sizes: Sizes, filter: [String]) async throws {
        self.server = server
        self.sizes = sizes
        self.filter = filter
        admin = try await Admin(server)
        postmaster = CPU.postmaster(ofBackend: try await admin.backendProcess())
    }

    private func selected(_ name: String) -> Bool {
        filter.isEmpty || filter.contains { name.localizedCaseInsensitiveContains($0) }
    }

    func finish() async {
        await admin.close()
    }

    /// The machine and the server, for the report's header.
    func describeMachine() async throws -> Machine {
        var settings: [String] = []
        for name in ["fsync", "synchronous_commit", "shared_buffers", "max_connections"] {
            for try await value in try await admin.connection.query("SELECT current_setting(\(name))", logger: quietLogger)
                .decode(String.self) {
                settings.append("\(name)=\(value)")
            }
        }
        return Machine(serverVersion: try await admin.serverVersion(), settings: settings, isLocal: postmaster != nil)
    }

    // MARK: - Timed

    /// Every selected workload, timed.
    mutating func timedRows() async throws -> [ResultRow] {
        let notes = BenchData.notes(sizes.notes)
        var rows: [ResultRow] = []
        if selected("parkAll") { rows.append(try await parkAll(notes)) }
        let retrieveName = "retrieve \(short(sizes.notes)) notes by identifier, random order"
        let retrieveAllName = "retrieveAll \(short(sizes.notes)) notes"
        if selected(retrieveName) || selected(retrieveAllName) {
            rows += try await reads(notes, retrieve: selected(retrieveName), retrieveAll: selected(retrieveAllName))
        }
        for workers in sizes.workerCounts {
            let name = "claim/complete \(short(sizes.notes)) rows, batches of \(sizes.claimBatch), \(workers) worker process"
                + (workers == 1 ? "" : "es")
            if selected(name) { rows.append(try await claims(notes, workers: workers, name: name)) }
        }
        return rows
    }

    /// A fresh schema for `kind`, filled with `notes` (untimed) when given.
    private mutating func freshSchema(for kind: ContenderKind, server: ServerAddress, filledWith notes: [BenchNote]?) async throws -> String {
        let schema = schemas.fresh()
        try kind.createSchema(schema, on: server)
        if let notes {
            let store = try await kind.open(server, schema: schema)
            try await store.parkAll(notes)
            await store.close()
        }
        return schema
    }

    private mutating func parkAll(_ notes: [BenchNote]) async throws -> ResultRow {
        var row = ResultRow(name: "parkAll \(short(notes.count)) notes, one call", unit: "objects/s")
        progress(row.name)
        for _ in 0..<sizes.fastRepetitions {
            for kind in kinds {
                let schema = try await freshSchema(for: kind, server: server, filledWith: nil)
                let store = try await kind.open(server, schema: schema)
                let run = try await measure(postmaster: postmaster, operations: notes.count) { try await store.parkAll(notes) }
                await store.close()
                let parked = try await admin.count(in: schema, status: SyncStatus.notSynced.rawValue)
                try expect(parked == notes.count, "\(kind.rawValue) parked \(parked) of \(notes.count)")
                try await admin.drop(schema)
                row.runs[kind, default: []].append(run)
                report(kind, run, row.unit)
            }
        }
        return row
    }

    /// Retrieves by identifier and retrieveAll, from one filled schema per contender.
    private mutating func reads(_ notes: [BenchNote], retrieve: Bool, retrieveAll: Bool) async throws -> [ResultRow] {
        var stores: [ContenderKind: any Contender] = [:]
        var filled: [String] = []
        for kind in kinds {
            let schema = try await freshSchema(for: kind, server: server, filledWith: notes)
            filled.append(schema)
            let store = try await kind.open(server, schema: schema)
            stores[kind] = store
            // What comes back is what was parked (the note's status is its row's: .notSynced).
            let first = try await store.retrieve(id: notes[0].id)
            try expect(first == notes[0], "\(kind.rawValue) retrieved \(String(describing: first)) for \(notes[0])")
        }
        var rows: [ResultRow] = []
        if retrieve {
            let identifiers = BenchData.shuffledIdentifiers(notes.count)
            var row = ResultRow(name: "retrieve \(short(notes.count)) notes by identifier, random order", unit: "objects/s")
            progress(row.name)
            for _ in 0..<sizes.fastRepetitions {
                for kind in kinds {
                    guard let store = stores[kind] else { continue }
                    let run = try await measure(postmaster: postmaster, operations: identifiers.count) {
                        for identifier in identifiers {
                            guard try await store.retrieve(id: identifier) != nil else { throw BenchFailure("\(identifier) not found") }
                        }
                    }
                    row.runs[kind, default: []].append(run)
                    report(kind, run, row.unit)
                }
            }
            rows.append(row)
        }
        if retrieveAll {
            var row = ResultRow(name: "retrieveAll \(short(notes.count)) notes", unit: "objects/s")
            progress(row.name)
            for _ in 0..<sizes.fastRepetitions {
                for kind in kinds {
                    guard let store = stores[kind] else { continue }
                    var count = 0
                    let run = try await measure(postmaster: postmaster, operations: notes.count) {
                        count = try await store.retrieveAll().count
                    }
                    try expect(count == notes.count, "\(kind.rawValue) retrieved \(count) of \(notes.count)")
                    row.runs[kind, default: []].append(run)
                    report(kind, run, row.unit)
                }
            }
            rows.append(row)
        }
        for store in stores.values { await store.close() }
        stores = [:]
        for schema in filled { try await admin.drop(schema) }
        return rows
    }

    private mutating func claims(_ notes: [BenchNote], workers: Int, name: String) async throws -> ResultRow {
        var row = ResultRow(name: name, unit: "rows/s", workers: workers)
        progress(row.name)
        for _ in 0..<sizes.claimRepetitions {
            for kind in kinds {
                let schema = try await freshSchema(for: kind, server: server, filledWith: notes)
                let outcome = try await WorkerProcesses.run(count: workers, kind: kind, server: server, schema: schema,
                                                      batch: sizes.claimBatch, postmaster: postmaster)
                try await checkClaimed(outcome, kind: kind, schema: schema, count: notes.count)
                try await admin.drop(schema)
                let run = Run(seconds: outcome.seconds, operations: notes.count, clientCPU: outcome.clientCPU,
                              serverCPU: outcome.serverCPU)
                row.runs[kind, default: []].append(run)
                report(kind, run, row.unit, detail: "rows per worker \(outcome.rows.map(String.init).joined(separator: "/"))")
            }
        }
        return row
    }

    /// Every row was claimed once, and completed: `.synced`, unclaimed.
    private func checkClaimed(_ outcome: WorkerProcesses.Outcome, kind: ContenderKind, schema: String, count: Int) async throws {
        let claimed = outcome.rows.reduce(0, +)
        try expect(claimed == count, "\(kind.rawValue) workers claimed \(claimed) rows of \(count)")
        let synced = try await admin.count(in: schema, status: SyncStatus.synced.rawValue)
        try expect(synced == count, "\(kind.rawValue) workers left \(synced) of \(count) rows .synced")
    }

    private func report(_ kind: ContenderKind, _ run: Run, _ unit: String, detail: String = "") {
        let server = run.serverCPU.map { String(format: ", server CPU %.2f s", $0) } ?? ""
        progress(String(format: "    %-10@ %9.0f %@ (%.2f s; client CPU %.2f s%@)%@", kind.rawValue, run.opsPerSecond, unit,
                        run.seconds, run.clientCPU, server, detail.isEmpty ? "" : "; " + detail))
    }

    // MARK: - Counted

    /// Every selected workload again, untimed, through a ``CountingRelay``: the round trips and
    /// statements of each operation.
    mutating func countedRows() async throws -> [CountedRow] {
        progress("counting round trips and statements (untimed, through a relay)")
        let relay = try await CountingRelay.start(upstream: try server.socketAddress())
        let relayed = try server.through(relayPort: relay.port)
        let notes = BenchData.notes(sizes.countedNotes)
        let identifiers = BenchData.shuffledIdentifiers(min(notes.count, 1_000))
        var park = CountedRow(name: "parkAll \(short(notes.count)) notes, one call", operation: "object", operations: notes.count)
        var retrieve = CountedRow(name: "retrieve by identifier (\(short(identifiers.count)) retrieves)", operation: "retrieve",
                                  operations: identifiers.count)
        var retrieveAll = CountedRow(name: "retrieveAll \(short(notes.count)) notes", operation: "object", operations: notes.count)
        var claimRows = sizes.workerCounts.filter { $0 == 1 || $0 == 4 }.map { workers in
            CountedRow(name: "claim/complete \(short(notes.count)) rows, batches of \(sizes.claimBatch), \(workers) worker"
                       + (workers == 1 ? "" : "s"), operation: "row", operations: notes.count)
        }
        let countsReads = [park, retrieve, retrieveAll].contains { selected($0.name) }
        claimRows = claimRows.filter { selected($0.name) }
        for kind in kinds {
            if countsReads { try await countReads(kind, relay: relay, relayed: relayed, notes: notes, identifiers: identifiers,
                                                  into: &park, &retrieve, &retrieveAll) }
            for index in claimRows.indices {
                let workers = claimRows[index].name.hasSuffix("1 worker") ? 1 : 4
                let schema = try await freshSchema(for: kind, server: relayed, filledWith: notes)
                let outcome = try await WorkerProcesses.run(count: workers, kind: kind, server: relayed, schema: schema,
                                                            batch: sizes.claimBatch, postmaster: nil, relay: relay)
                claimRows[index].counts[kind] = outcome.counts
                try await checkClaimed(outcome, kind: kind, schema: schema, count: notes.count)
                try await admin.drop(schema)
            }
        }
        await relay.stop()
        return (countsReads ? [park, retrieve, retrieveAll] : []) + claimRows
    }

    /// parkAll, retrieves and retrieveAll by `kind` on a fresh schema, through `relay`.
    private mutating func countReads(_ kind: ContenderKind, relay: CountingRelay, relayed: ServerAddress, notes: [BenchNote],
                                     identifiers: [String], into park: inout CountedRow, _ retrieve: inout CountedRow,
                                     _ retrieveAll: inout CountedRow) async throws {
        let schema = try await freshSchema(for: kind, server: relayed, filledWith: nil)
        let store = try await kind.open(relayed, schema: schema)
        var before = try await relay.counts()
        try await store.parkAll(notes)
        var after = try await relay.counts()
        park.counts[kind] = after - before
        before = after
        for identifier in identifiers { _ = try await store.retrieve(id: identifier) }
        after = try await relay.counts()
        retrieve.counts[kind] = after - before
        before = after
        _ = try await store.retrieveAll()
        retrieveAll.counts[kind] = try await relay.counts() - before
        await store.close()
        try await admin.drop(schema)
    }
}
