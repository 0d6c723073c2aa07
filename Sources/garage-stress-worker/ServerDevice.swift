// The devices of the sync server's chaos test (ServerChaosTests): a device that edits notes
// and syncs them with `SyncEngine.run()` through `HTTPSyncTransport` to several `garage-server`
// instances, until a stop file appears; then it syncs until it has nothing left to send.
//
//     garage-stress-worker <store-path> server-device <name> <seed> <teams> <token> <urls> <stop-path>
//
// <teams> and <urls> are separated by commas. It creates, edits and deletes its own notes
// (`<name>-<n>`, private: no other device writes them) and the teams' shared notes
// (`shared-<team>-<k>`, which every device of the team writes, created offline under the same
// identifiers), and goes offline now and then (its engine stopped). Its journal,
// `<store-path>.journal`, gets `INTENT SAVE|DELETE <id> <title>` before each write and
// `SAVE|DELETE <id> <title>` once the write returned. Every download is checked: an object of
// a team the device doesn't read appends `LEAK <id> <team>` to `<store-path>.leaks`. One upload
// answer in ten is lost (the upload happened; the engine hears an error), until the stop.
// It prints `DONE <saves> <deletions> <activity>` and exits 0 once it holds nothing to upload
// and a sync moves nothing (`activity`: what its last syncs uploaded and applied). Started with
// the stop file there, it only syncs so.
import Foundation
import GarageLite
import GarageLiteClient
import GarageStressModels

/// The device's transport: the ready one, with every download checked against its teams, and
/// answers lost on purpose.
final class CheckingTransport: SyncTransport, Sendable {
    let inner: HTTPSyncTransport
    let teams: Set<String>
    let leaks: String
    let losing = Protected(true)
    let random: Protected<SplitMix64>

    init(inner: HTTPSyncTransport, teams: Set<String>, leaks: String, seed: String) {
        self.inner = inner
        self.teams = teams
        self.leaks = leaks
        random = Protected(SplitMix64(seed: seed + "-transport"))
    }

    struct LostAnswer: Error {}

    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        let results = try await inner.upload(batch)
        if losing.read({ $0 }), random.write({ $0.next() % 10 == 0 }) { throw LostAnswer() }
        return results
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        let batch = try await inner.download(request)
        for change in batch.changes {
            guard let note = change.object as? ServerChaosNote, !teams.contains(note.team) else { continue }
            _ = AppendLog(path: leaks)?.append("LEAK \(note.id) \(note.team)")
        }
        return batch
    }
}

func runServerDevice(storePath: String, arguments: [String]) -> Never {
    guard arguments.count == 6 else {
        print("ERROR usage: garage-stress-worker <store-path> server-device <name> <seed> <teams> <token> <urls> <stop-path>")
        exit(2)
    }
    let (name, seed, token, stopPath) = (arguments[0], arguments[1], arguments[3], arguments[5])
    let teams = arguments[2].split(separator: ",").map(String.init)
    let urls = arguments[4].split(separator: ",").compactMap { URL(string: String($0)) }
    let done = DispatchSemaphore(value: 0)
    let outcome = Protected<Int32>(1)
    Task {
        do {
            try await ServerDevice(storePath: storePath, name: name, seed: seed, teams: teams, token: token, urls: urls,
                                   stopPath: stopPath).run()
            outcome.write { $0 = 0 }
        } catch {
            say("ERROR \(name) threw: \(error)")
        }
        done.signal()
    }
    done.wait()
    exit(outcome.read { $0 })
}

struct ServerDevice {
    let storePath: String
    let name: String
    let seed: String
    let teams: [String]
    let token: String
    let urls: [URL]
    let stopPath: String

    func run() async throws {
        let garage = try TestStores.open(path: storePath)
        // Each device asks the instances in an order of its own.
        var random = SplitMix64(seed: seed)
        let transport = CheckingTransport(inner: HTTPSyncTransport(servers: urls.shuffled(using: &random)) { [token] in token },
                                          teams: Set(teams), leaks: storePath + ".leaks", seed: seed)
        var configuration = SyncEngine.Configuration()
        configuration.retryAfter = 0.2
        configuration.debounce = 0.02
        configuration.pollInterval = 0.3
        let engine = SyncEngine(garage: garage, transport: transport, types: [.of(ServerChaosNote.self)], configuration: configuration)
        guard let journal = AppendLog(path: storePath + ".journal") else { throw DeviceFailure("cannot open the journal") }
        var running = Task { await engine.run() }
        // What the engine did to this device's own notes, for a failure's story.
        let own = "\(name)-"
        let watching = Task {
            var last: Date?
            for await status in engine.statusUpdates() where status.lastSync != last {
                last = status.lastSync
                guard let report = status.lastReport else { continue }
                for conflict in report.conflicts where conflict.object.identifier.hasPrefix(own) {
                    say("\(name): conflict on \(conflict.object.identifier): \(conflict.resolution), deleted here: \(conflict.wasDeletedLocally)")
                }
                let applied = report.downloads.flatMap(\.applied).filter { $0.hasPrefix(own) }
                if !applied.isEmpty { say("\(name): downloaded its own \(applied.joined(separator: " "))") }
                let synced = report.synced.filter { $0.hasPrefix(own) }
                if !synced.isEmpty { say("\(name): uploaded \(synced.joined(separator: " "))") }
                let deleted = report.uploads.flatMap(\.deletionsUploaded).filter { $0.hasPrefix(own) }
                if !deleted.isEmpty { say("\(name): uploaded the deletion of \(deleted.joined(separator: " "))") }
            }
        }
        defer { watching.cancel() }
        var (saves, deletions, step) = (0, 0, 0)
        while !FileManager.default.fileExists(atPath: stopPath) {
            step += 1
            let dice = random.next() % 100
            let title = "\(name):\(seed):\(step)"
            if dice < 4 {
                // Offline for a while: the engine stopped, edits go on.
                running.cancel()
                await running.value
                try await Task.sleep(for: .milliseconds(100 + Int(random.next() % 400)))
                running = Task { await engine.run() }
                continue
            }
            let team = teams[Int(random.next() % UInt64(teams.count))]
            let mine = try await garage.retrieveAll(ServerChaosNote.self).filter { $0.owner == name || ($0.owner == nil && teams.contains($0.team)) }
            if dice < 40 || mine.isEmpty {
                let shared = random.next() % 3 == 0
                let note = ServerChaosNote(id: shared ? "shared-\(team)-\(random.next() % 6)" : "\(name)-\(seed)-\(step)", team: team,
                                     title: title, owner: shared ? nil : name)
                if shared, try await garage.retrieve(ServerChaosNote.self, identifier: note.id) != nil { continue }
                _ = journal.append("INTENT SAVE \(note.id) \(title)")
                try await garage.park(note)
                _ = journal.append("SAVE \(note.id) \(title)")
                saves += 1
            } else if dice < 85 {
                var note = mine[Int(random.next() % UInt64(mine.count))]
                note.title = title
                _ = journal.append("INTENT SAVE \(note.id) \(title)")
                try await garage.park(note)
                _ = journal.append("SAVE \(note.id) \(title)")
                saves += 1
            } else {
                let note = mine[Int(random.next() % UInt64(mine.count))]
                _ = journal.append("INTENT DELETE \(note.id) -")
                _ = try await garage.delete(ServerChaosNote.self, identifier: note.id)
                _ = journal.append("DELETE \(note.id) -")
                deletions += 1
            }
            try await Task.sleep(for: .milliseconds(5 + Int(random.next() % 40)))
        }
        say("\(name): stops editing after \(saves) saves and \(deletions) deletions")
        // The stop: no more lost answers; sync until nothing is left to upload and a sync
        // downloads nothing (bounded: 4 minutes, under the test's 5-minute wait: on PostgreSQL
        // after a 300 s run, a device's first sync took up to 114 s on this 2-core machine). The test starts the devices again, round
        // after round, until a round in which no device uploaded or applied anything.
        running.cancel()
        await running.value
        transport.losing.write { $0 = false }
        let deadline = Date().addingTimeInterval(240)
        var (quietSyncs, activity) = (0, 0)
        while quietSyncs < 2 {
            guard Date() < deadline else { throw DeviceFailure("still not quiet after 4 minutes: \(engine.status)") }
            let began = ContinuousClock.now
            let report: SyncEngineReport?
            var failure = ""
            do { report = try await engine.sync() } catch { report = nil; failure = ": \(error)" }
            let pending = try await garage.syncStatusCounts([.notSynced, .syncing]).values.flatMap(\.values).reduce(0, +)
            let moved = report.map { $0.synced.count + $0.downloads.flatMap(\.applied).count + $0.downloads.flatMap(\.deleted).count } ?? 1
            activity += moved
            say("\(name): a sync moved \(moved), \(pending) left to upload, in \(ContinuousClock.now - began)\(report == nil ? " (it failed\(failure))" : "")")
            quietSyncs = report != nil && pending == 0 && moved == 0 ? quietSyncs + 1 : 0
            if quietSyncs == 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        say("DONE \(saves) \(deletions) \(activity)")
    }
}

/// Writes `line` to standard output at once (no buffer: the process may be killed next).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct DeviceFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
