import Foundation
import Testing
@testable import GarageLite

/// Issue 26: two devices and the server edit and delete notes at random, while uploads fail,
/// answers are lost and syncs are killed midway (a claim taken, maybe uploaded, never ended);
/// once everything syncs without failures, both devices and the server hold the same notes, and
/// no edit is lost that the merge policy didn't drop and report.
///
/// Each side edits its own property (`a`, `b`, `s`), which a three-way merge must always keep,
/// and all edit `shared`, where the last writer wins: a value lost there was either written over
/// later, or reported in a conflict's `discardedFields`.
///
/// `GARAGE_ENGINE_SEQUENCES=200 swift test --filter SyncEnginePropertyTests` runs more
/// sequences (default 12, of 40 steps); `GARAGE_ENGINE_SEED` repeats a run.
@Suite("The sync engine converges")
struct SyncEnginePropertyTests {
    static let environment = ProcessInfo.processInfo.environment
    static let sequences = environment["GARAGE_ENGINE_SEQUENCES"].flatMap { Int($0) } ?? 12
    static let seed = environment["GARAGE_ENGINE_SEED"].flatMap { UInt64($0) } ?? 0x5359_4E43

    /// What happened to each note, to check the end against.
    struct History {
        /// The last value each side wrote to its own property, by note.
        var last: [String: [String: String]] = ["a": [:], "b": [:], "s": [:]]
        /// The values written to `shared`, by note, in order, with the step and side.
        var shared: [String: [(step: Int, side: String, value: String)]] = [:]
        /// The notes someone deleted: a deletion may drop edits, by design.
        var deleted: Set<String> = []
        /// The `shared` properties a merge reported dropping, by note.
        var discarded: Set<String> = []
        var steps: [String] = []
    }

    final class Device: Sendable {
        let name: String
        let property: WritableKeyPath<EngineNote, String> & Sendable
        let garage: Garage
        let engine: SyncEngine

        init(_ name: String, _ property: WritableKeyPath<EngineNote, String> & Sendable, path: String, server: ScriptedServer) throws {
            self.name = name
            self.property = property
            garage = try TestEngine.garage(path: path)
            var configuration = SyncEngine.Configuration()
            configuration.retryAfter = 0
            configuration.lease = 0            // a claim left by a killed sync is released by the next
            configuration.batchSize = 3
            configuration.pollInterval = nil
            engine = SyncEngine(garage: garage, transport: ScriptedTransport(server: server),
                                types: [.of(EngineNote.self)], configuration: configuration)
        }

        func notes() async throws -> [String: EngineNote] {
            Dictionary(uniqueKeysWithValues: try await garage.retrieveAll(EngineNote.self).map { ($0.id, $0.content) })
        }
    }

    @Test func randomHistoriesConverge() async throws {
        var random = SplitMix64(state: Self.seed)
        for sequence in 0..<Self.sequences {
            try await Self.run(sequence: sequence, steps: 40, &random)
        }
    }

    static func run(sequence: Int, steps: Int, _ random: inout SplitMix64) async throws {
        let directory = try TemporaryDirectory()
        let server = ScriptedServer()
        let devices = [try Device("A", \.a, path: directory.path("a.garage"), server: server),
                       try Device("B", \.b, path: directory.path("b.garage"), server: server)]
        var history = History()
        var created = 0
        // A server that forgets deletions, or keeps their versions (an edit of an older version
        // of a deleted note is then a conflict with the deletion).
        let keepsDeletions = Bool.random(using: &random)
        await server.script(keepsDeletions: keepsDeletions)
        history.steps.append("the server \(keepsDeletions ? "keeps" : "forgets") deletions")
        func token(_ side: String, _ step: Int) -> String { "\(side)\(step)" }
        for step in 1...steps {
            let device = devices.randomElement(using: &random)!
            let ids = Array(try await device.notes().keys).sorted()
            switch Int.random(in: 0..<14, using: &random) {
            case 0, 1:
                created += 1
                let id = "\(device.name)-\(created)"
                var note = EngineNote(id: id)
                note[keyPath: device.property] = token(device.name, step)
                try await device.garage.park(note)
                history.last[device.name.lowercased()]![id] = note[keyPath: device.property]
                history.steps.append("\(step): \(device.name) creates \(id)")
            case 2, 3, 4:
                guard let id = ids.randomElement(using: &random),
                      var note = try await device.garage.retrieve(EngineNote.self, identifier: id) else { continue }
                note[keyPath: device.property] = token(device.name, step)
                try await device.garage.park(note)
                history.last[device.name.lowercased()]![id] = note[keyPath: device.property]
                history.steps.append("\(step): \(device.name) edits \(id).\(device.name.lowercased())")
            case 5:
                guard let id = ids.randomElement(using: &random),
                      var note = try await device.garage.retrieve(EngineNote.self, identifier: id) else { continue }
                note.shared = token(device.name, step)
                try await device.garage.park(note)
                history.shared[id, default: []].append((step, device.name, note.shared))
                history.steps.append("\(step): \(device.name) edits \(id).shared")
            case 6:
                guard let id = ids.randomElement(using: &random) else { continue }
                try await device.garage.delete(EngineNote.self, identifier: id)
                history.deleted.insert(id)
                history.steps.append("\(step): \(device.name) deletes \(id)")
            case 7:
                guard let id = await server.notes.keys.sorted().randomElement(using: &random) else { continue }
                if Bool.random(using: &random) {
                    let value = token("S", step)
                    if Bool.random(using: &random) {
                        await server.edit(id) { $0.s = value }
                        history.last["s"]![id] = value
                    } else {
                        await server.edit(id) { $0.shared = value }
                        history.shared[id, default: []].append((step, "S", value))
                    }
                    history.steps.append("\(step): the server edits \(id)")
                } else {
                    await server.delete(id)
                    history.deleted.insert(id)
                    history.steps.append("\(step): the server deletes \(id)")
                }
            case 8:
                // Killed midway: a claim taken, its batch maybe stored by the server, never ended.
                let claim = try await device.garage.claim(EngineNote.self, limit: 2)
                if !claim.isEmpty, Bool.random(using: &random) {
                    let changes = zip(claim.objects, claim.identifiers).map { SyncChange(identifier: $1, object: $0, version: nil) }
                    _ = try? await server.upload(UploadBatch(typeName: "EngineNote", changes: changes))
                }
                history.steps.append("\(step): \(device.name) is killed during an upload of \(claim.identifiers)")
            default:
                let failure = Int.random(in: 0..<4, using: &random)
                await server.script(failing: failure == 0 ? 1 : 0, losing: failure == 1 ? 1 : 0)
                history.steps.append("\(step): \(device.name) syncs" + [", the upload fails", ", the answer is lost", "", ""][failure])
                if let report = try? await device.engine.sync() { note(report, &history) }
                await server.script()
            }
        }
        // Quiescence: no more failures, sync until nothing changes.
        await server.script()
        for _ in 0..<6 {
            for device in devices { note(try await device.engine.sync(), &history) }
        }
        let context = Comment(rawValue: "sequence \(sequence) (seed \(Self.seed)):\n" + history.steps.joined(separator: "\n"))
        let serverNotes = await server.notes.mapValues(\.content)
        for device in devices {
            let notes = try await device.notes()
            #expect(notes == serverNotes, "\(device.name) differs from the server", sourceLocation: .__here())
            if notes != serverNotes { Issue.record(context) }
            #expect(try await device.garage.count(EngineNote.self, withStatus: .notSynced) == 0, context)
        }
        // Nothing lost: each side's own property holds its last value, unless a deletion intervened.
        for (property, values) in history.last {
            for (id, value) in values where !history.deleted.contains(id) {
                let final = serverNotes[id].map { property == "a" ? $0.a : property == "b" ? $0.b : $0.s }
                #expect(final == value, "\(id).\(property) is \(final ?? "gone"), not \(value)", sourceLocation: .__here())
                if final != value { Issue.record(context) }
            }
        }
        // `shared`: the last value of a side is there, or written over later, or reported dropped.
        for (id, writes) in history.shared where !history.deleted.contains(id) {
            let final = serverNotes[id]?.shared
            for side in ["A", "B", "S"] {
                guard let last = writes.last(where: { $0.side == side }), last.value != final else { continue }
                let overwritten = writes.contains { $0.step > last.step }
                #expect(overwritten || history.discarded.contains(id), "\(id).shared lost \(last.value) silently; \(context)")
            }
        }
    }

    static func note(_ report: SyncEngineReport, _ history: inout History) {
        for conflict in report.conflicts where conflict.discardedFields.contains("shared") {
            history.discarded.insert(conflict.object.identifier)
        }
    }
}
