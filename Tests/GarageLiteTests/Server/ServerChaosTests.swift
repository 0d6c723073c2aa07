#if canImport(JWTKit) && canImport(Hummingbird)
import Foundation
import GarageLite
import GarageLitePostgres
import GarageStressModels
import JWTKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 43's chaos: 3 `garage-server` instances on one store, 4 device processes
/// (`garage-stress-worker … server-device`: `SyncEngine.run()` through `HTTPSyncTransport`) that
/// create, edit and delete private and shared notes, go offline and lose answers; devices and
/// instances killed with SIGKILL and started again. After quiescence:
///
/// - every device holds exactly the server's notes of its teams, and nothing to upload;
/// - no device ever downloaded a note of a team it doesn't read (checked on every download);
/// - every private note (one writer) ends as its device's last acknowledged write left it:
///   0 saves lost, 0 deletions undone;
/// - every shared note ends absent or with a title some device wrote.
///
/// On the tests' SQLite (the instances share one file) by default; on PostgreSQL (one schema,
/// with `pg_ctl restart -m immediate` among the faults) with `GARAGE_SERVER_CHAOS_POSTGRES=1`
/// under `.ci/with-postgres`, alone. `GARAGE_SERVER_CHAOS_SECONDS` sets how long the chaos lasts
/// (12 s by default; the full run: 300); `GARAGE_SERVER_CHAOS_KEEP=DIR` keeps the run's folder.
@Suite("Sync server: chaos", .serialized, .ownThreads, .acrossProcesses)
struct ServerChaosTests {
    static let seconds = Double(ProcessInfo.processInfo.environment["GARAGE_SERVER_CHAOS_SECONDS"] ?? "") ?? 12
    static let onPostgres = ProcessInfo.processInfo.environment["GARAGE_SERVER_CHAOS_POSTGRES"] == "1"
    static let teams: [[String]] = [["1"], ["1", "2"], ["2", "3"], ["3", "1"]]

    /// A port nobody listens on now: the system's choice for a socket bound to port 0.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// One `garage-server` instance on `port`, started again by `start()`.
    final class Instance {
        let port: Int
        let arguments: [String]
        let log: URL
        var process: ChildProcess?

        init(port: Int, store: String, secret: String, log: URL, options: [String] = []) {
            self.port = port
            self.log = log
            arguments = ["--store", store, "--type", "ServerChaosNote:team", "--token-key-file", secret, "--port", "\(port)"] + options
        }

        /// Starts it, and waits until it listens (bounded: 60 s).
        func start() throws {
            let executable = try #require(ToolProcess.builtExecutable(named: "garage-server"))
            let before = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").components(separatedBy: "serving").count
            process = try ChildProcess(executable: executable, arguments: arguments, output: log)
            for _ in 0..<600 {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                if text.components(separatedBy: "serving").count > before { return }
                guard process?.isRunning == true else { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            Issue.record("the instance on \(port) did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
    }

    /// One device process, started again (on the same store) by `start()`.
    final class Device {
        let name: String
        let store: String
        let teams: [String]
        let token: String
        let urls: String
        let stop: String
        let log: URL
        var process: ChildProcess?
        var starts = 0

        init(name: String, folder: TemporaryDirectory, teams: [String], token: String, urls: String) {
            self.name = name
            store = folder.path("\(name).garage")
            self.teams = teams
            self.token = token
            self.urls = urls
            stop = folder.path("stop")
            log = URL(fileURLWithPath: folder.path("\(name).log"))
        }

        func start() throws {
            starts += 1
            let executable = try #require(ToolProcess.builtExecutable(named: "garage-stress-worker"))
            process = try ChildProcess(executable: executable, arguments: [
                store, "server-device", name, "\(name)s\(starts)", teams.joined(separator: ","), token, urls, stop,
            ], output: log)
        }
    }

    @Test func devicesAndInstancesKilledAgainAndAgainLoseNothing() async throws {
        let folder = try TemporaryDirectory()
        // GARAGE_SERVER_CHAOS_KEEP=DIR keeps the run's folder (logs, journals, stores) in DIR.
        defer {
            if let keep = ProcessInfo.processInfo.environment["GARAGE_SERVER_CHAOS_KEEP"] {
                try? FileManager.default.copyItem(at: folder.url, to: URL(fileURLWithPath: keep).appendingPathComponent(folder.url.lastPathComponent))
            }
        }
        let secret = "the chaos test's secret, thirty-two bytes and more"
        let secretPath = folder.path("secret")
        try Data(secret.utf8).write(to: URL(fileURLWithPath: secretPath))
        // The server's store: the test engine's (a file, or a schema in the PostgreSQL pass),
        // or with GARAGE_SERVER_CHAOS_POSTGRES=1 a schema of the first pass's server.
        let serverPath = folder.path("server.garage")
        let store: String
        if Self.onPostgres {
            try #require(PostgresEngineTests.server != nil, "GARAGE_SERVER_CHAOS_POSTGRES=1 needs .ci/with-postgres")
            store = PostgresEngineTests.newSchema().url
        } else {
            store = TestEngine.location(path: serverPath)
        }
        let instances = try (0..<3).map { index in
            Instance(port: try Self.freePort(), store: store, secret: secretPath, log: URL(fileURLWithPath: folder.path("instance\(index).log")))
        }
        for instance in instances { try instance.start() }
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        let urls = instances.map { "http://127.0.0.1:\($0.port)" }.joined(separator: ",")
        var devices: [Device] = []
        for (index, teams) in Self.teams.enumerated() {
            let token = try await keys.sign(SyncTokensTests.claims("device\(index)", scopes: teams, expiring: 7_200))
            devices.append(Device(name: "d\(index)", folder: folder, teams: teams, token: token, urls: urls))
        }
        for device in devices { try device.start() }
        defer {
            for device in devices { device.process?.kill() }
            for instance in instances { instance.process?.kill() }
        }

        // The chaos: every 0.3 to 1.5 s, a device or an instance killed and started again, or
        // (on PostgreSQL) the server restarted without a checkpoint.
        var random = SystemRandomNumberGenerator()
        var (deviceKills, instanceKills, serverRestarts) = (0, 0, 0)
        let end = Date().addingTimeInterval(Self.seconds)
        while Date() < end {
            try await Task.sleep(for: .milliseconds(Int.random(in: 300...1_500, using: &random)))
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let device = devices.randomElement(using: &random)!
                device.process?.kill()
                device.process?.waitUntilExit()
                try device.start()
                deviceKills += 1
            case 5..<9:
                let instance = instances.randomElement(using: &random)!
                instance.process?.kill()
                instance.process?.waitUntilExit()
                try instance.start()
                instanceKills += 1
            default:
                if Self.onPostgres {
                    try Self.restartPostgresImmediately()
                    serverRestarts += 1
                }
            }
            for device in devices where device.process?.isRunning != true {
                let log = (try? String(contentsOf: device.log, encoding: .utf8)) ?? ""
                let crash = log.components(separatedBy: "\n").drop { !$0.contains("Fatal error") && !$0.contains("crashed") }.prefix(40)
                Issue.record("\(device.name) ended by itself: \(crash.isEmpty ? String(log.suffix(2_000)) : crash.joined(separator: "\n"))")
                try device.start()
            }
        }

        // Quiescence: the devices stop editing, sync until they have nothing to send, and exit.
        FileManager.default.createFile(atPath: folder.path("stop"), contents: nil)
        // A device that ends quiet may still miss what another uploads after: round after
        // round, every device syncs until quiet, until a round in which none moved anything.
        var rounds = 0
        while true {
            rounds += 1
            var activity = 0
            for device in devices {
                let process = try #require(device.process)
                let ended = process.wait(timeout: 300)
                let log = (try? String(contentsOf: device.log, encoding: .utf8)) ?? ""
                try #require(ended && process.exitedCleanly, "\(device.name): \(log.suffix(3_000))")
                let done = log.split(separator: "\n").last { $0.hasPrefix("DONE ") }?.split(separator: " ")
                activity += done.flatMap { Int($0.last ?? "") } ?? 1
            }
            if activity == 0 || rounds == 8 { break }
            for device in devices { try device.start() }
        }
        #expect(rounds < 8, "the devices still moved changes after 8 rounds of syncs")
        for instance in instances { instance.process?.kill(SIGTERM) }
        for instance in instances { _ = instance.process?.wait(timeout: 60) }

        // What the server holds, by identifier.
        let server = try Self.onPostgres ? Garage(postgresURL: store) : TestEngine.garage(path: serverPath)
        let serverNotes = Dictionary(uniqueKeysWithValues: try await server.records(ofType: "ServerChaosNote", limit: 1_000_000)
            .filter { !$0.isDeleted }
            .map { ($0.identifier, try JSONDecoder().decode(ServerChaosNote.self, from: Data($0.json.utf8))) })
        var journal: [(device: String, kind: String, id: String, title: String)] = []
        var saves = 0, deletions = 0
        for device in devices {
            let local = try TestEngine.garage(path: device.store)
            let notes = Dictionary(uniqueKeysWithValues: try await local.retrieveAll(ServerChaosNote.self).map { ($0.id, $0) })
            let expected = serverNotes.filter { device.teams.contains($0.value.team) }
            #expect(Set(notes.keys) == Set(expected.keys), "\(device.name): \(Set(notes.keys).symmetricDifference(expected.keys).sorted().prefix(20))")
            for (id, note) in notes where expected[id].map({ $0.title != note.title || $0.team != note.team }) ?? false {
                Issue.record("\(device.name) holds \(id) as \(note.title), the server as \(expected[id]!.title)")
            }
            #expect(try await local.syncStatusCounts([.notSynced, .syncing]).isEmpty, "\(device.name) has changes left")
            #expect(try await local.heldObjects(ServerChaosNote.self).isEmpty, "\(device.name) holds objects back")
            let leaks = (try? String(contentsOfFile: device.store + ".leaks", encoding: .utf8)) ?? ""
            #expect(leaks.isEmpty, "\(device.name) downloaded notes of other teams: \(leaks.prefix(500))")
            let lines = (try? String(contentsOfFile: device.store + ".journal", encoding: .utf8)) ?? ""
            for line in lines.split(separator: "\n") {
                let fields = line.split(separator: " ").map(String.init)
                if fields.count == 4, fields[0] == "INTENT" {
                    journal.append((device.name, "INTENT " + fields[1], fields[2], fields[3]))
                } else if fields.count == 3 {
                    journal.append((device.name, fields[0], fields[1], fields[2]))
                    if fields[0] == "SAVE" { saves += 1 } else { deletions += 1 }
                }
            }
        }

        // Private notes: their one writer's last acknowledged write (or a later intent whose
        // write may have committed before a kill) is what the server holds.
        var privateChecked = 0, deletionsUndone = 0
        for (id, entries) in Dictionary(grouping: journal, by: \.id) where !id.hasPrefix("shared-") {
            guard let lastDone = entries.lastIndex(where: { $0.kind == "SAVE" || $0.kind == "DELETE" }) else { continue }
            let acceptable: [String?] = entries[lastDone...].map { $0.kind.hasSuffix("DELETE") ? nil : $0.title }
            let final = serverNotes[id]?.title
            let story = "\(id): the server holds \(final ?? "nothing"), its device last wrote \(acceptable.map { $0 ?? "a deletion" }); its journal: \(entries.map { "\($0.kind) \($0.title)" }); the device's log: \(Self.lines(mentioning: id, in: folder))"
            if acceptable == [nil], final != nil { deletionsUndone += 1 }
            #expect(acceptable.contains(final), Comment(rawValue: story))
            privateChecked += 1
        }
        // Shared notes: absent, or a title some device wrote.
        let titles = Set(journal.map(\.title))
        for (id, note) in serverNotes where id.hasPrefix("shared-") {
            #expect(titles.contains(note.title), "\(id) holds \(note.title), which no device wrote")
        }
        print("Server chaos (\(Self.onPostgres ? "PostgreSQL" : "SQLite"), \(Int(Self.seconds)) s): 3 instances, 4 devices; "
            + "\(deviceKills) device kills, \(instanceKills) instance kills, \(serverRestarts) server restarts; "
            + "\(saves) saves and \(deletions) deletions acknowledged; \(serverNotes.count) notes at the end, "
            + "\(privateChecked) private notes checked against their writer's journal, \(deletionsUndone) deletions undone; quiet after \(rounds) rounds")
    }

    /// The lines of the devices' logs that name `id`.
    static func lines(mentioning id: String, in folder: TemporaryDirectory) -> [String] {
        (0..<teams.count).flatMap { index in
            ((try? String(contentsOfFile: folder.path("d\(index).log"), encoding: .utf8)) ?? "")
                .split(separator: "\n").filter { $0.contains(id) }.map { "d\(index): \($0)" }
        }
    }

    /// `pg_ctl restart -m immediate`: the server stops without a checkpoint, as a crash does.
    static func restartPostgresImmediately() throws {
        let server = try #require(PostgresEngineTests.server)
        let serverLog = URL(fileURLWithPath: server.data).deletingLastPathComponent().appendingPathComponent("server.log").path
        var command = ["\(server.bin)/pg_ctl", "-D", server.data, "-l", serverLog, "-m", "immediate", "-w", "restart"]
        if getuid() == 0 { command = ["/usr/sbin/runuser", "-u", "postgres", "--"] + command }
        let restart = try ToolProcess.run(executable: URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        try #require(restart.exitCode == 0, "pg_ctl restart failed: \(restart)")
    }
}
#endif
