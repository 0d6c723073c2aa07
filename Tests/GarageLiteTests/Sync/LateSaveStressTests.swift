import Foundation
import GarageStressModels
import Testing
@testable import GarageLite

/// Issue 24: unsaved changes saved late, by several processes at once, against downloads
/// merged meanwhile. Each edit appends a token of its own to a note; at the end every token
/// a process reported saved (or merged) must be in its note: a stale save that landed, or a
/// child edit `.keepStored` dropped unreported, would lose one. Every process also checks,
/// after each of its commits, that every note and notebook still retrieves.
///
/// `GARAGE_LATE_SAVE_ROUNDS` sets the rounds per process (default 200; the full run, 2000:
/// `GARAGE_LATE_SAVE_ROUNDS=2000 swift test --filter LateSaveStressTests`).
@Suite("Late saves across processes", .serialized, .ownThreads, .acrossProcesses)
struct LateSaveStressTests {
    static let rounds = ProcessInfo.processInfo.environment["GARAGE_LATE_SAVE_ROUNDS"].flatMap { Int($0) } ?? 200

    @Test func lateSavesAndMergedDownloadsLoseNoEdit() throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker was not built: swift build --build-tests")
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.garage")
        // The notebook exists before the processes start, so that none of them creates it.
        let garage = try TestEngine.garage(path: path, busyTimeout: 30)
        try garage.park(StressNotebook(id: "nb", title: "Notes", notes: (0..<6).map { StressNote(id: "n-\($0)", tokens: []) }))

        var processes: [WorkerProcess] = []
        for (role, name) in [("late-editor", "a"), ("late-editor", "b"), ("late-editor", "c"), ("late-downloader", "s")] {
            processes.append(try WorkerProcess(name: "\(role)-\(name)", executable: worker,
                                               arguments: [path, role, name, "seed-\(name)", String(Self.rounds)],
                                               directory: directory.url))
        }
        for process in processes {
            let ended = process.wait(timeout: 600)
            if !ended { process.kill() }
            #expect(ended && process.exitedCleanly, "\(process.name): \(process.outputLines(startingWith: "ERROR"))")
        }

        let notes = Dictionary(uniqueKeysWithValues: try garage.retrieveAll(StressNote.self).map { ($0.id, Set($0.tokens)) })
        var reported: [(token: String, note: String)] = []
        for process in processes {
            // An editor's own note: the tokens saved to it since it last deleted it.
            var own: (note: String, tokens: [String])?
            for line in process.outputLines(startingWith: "") {
                let fields = line.split(separator: " ").map(String.init)
                if fields.first == "DELETED" { own = (fields[1], []) }
                guard fields.first == "SAVED" || fields.first == "MERGED", fields.count == 3 else { continue }
                if fields[2].hasPrefix("n-") {
                    reported.append((fields[1], fields[2]))
                } else {
                    own = (fields[2], (own?.tokens ?? []) + [fields[1]])
                }
            }
            if let own {
                let missing = own.tokens.filter { !(notes[own.note]?.contains($0) ?? false) }
                #expect(missing.isEmpty, "\(process.name)'s own note \(own.note) lost \(missing)")
            }
        }
        // The shared notes: every token reported saved or merged is in its note, and nothing
        // else is (a token no process reported would be a save it believed refused).
        let lost = reported.filter { !(notes[$0.note]?.contains($0.token) ?? false) }
        #expect(lost.isEmpty, "tokens reported written but missing from their notes: \(lost.prefix(20))")
        let shared = notes.filter { $0.key.hasPrefix("n-") }.values.reduce(into: Set<String>()) { $0.formUnion($1) }
        let unreported = shared.subtracting(reported.map(\.token))
        #expect(unreported.isEmpty, "tokens in the notes that no process reported saved: \(unreported.prefix(20))")
        let saved = reported
        #expect(saved.count >= Self.rounds * 3)
        // The run exercised the refusals it is about.
        let stats = processes.flatMap { $0.outputLines(startingWith: "STATS ") }
        let refusals = stats.compactMap { line in
            line.components(separatedBy: ", ").first { $0.hasSuffix("refused as stale") }?.split(separator: " ").first.flatMap { Int($0) }
        }.reduce(0, +)
        #expect(refusals > 0, "\(stats)")
        #expect(try garage.retrieve(StressNotebook.self, identifier: "nb")?.notes.count == 6)
    }
}

/// Issue 24's sequences with the other writer in another process.
@Suite("Changes are checked where they are written, against another process", .ownThreads, .acrossProcesses)
struct CrossProcessWriteTimeCheckTests {
    struct Store {
        let directory: TemporaryDirectory
        let path: String
        let garage: Garage
        let worker: URL

        init() throws {
            worker = try #require(stressWorkerExecutable(), "garage-stress-worker was not built: swift build --build-tests")
            directory = try TemporaryDirectory()
            path = directory.path("notes.garage")
            garage = try TestEngine.garage(path: path, busyTimeout: 30)
            try garage.park(StressNotebook(id: "nb", title: "Notes", notes: [
                StressNote(id: "n-0", tokens: ["first"]), StressNote(id: "n-1", tokens: ["second"]),
            ]))
            try garage.park(StressNote(id: "x", tokens: ["loose"]))
        }

        /// Runs `garage-stress-worker <path> note <arguments>` to its end.
        func other(_ arguments: String...) throws {
            let process = try WorkerProcess(name: "note-\(arguments.joined(separator: "-"))", executable: worker,
                                            arguments: [path, "note"] + arguments, directory: directory.url)
            #expect(process.wait(timeout: 60) && process.exitedCleanly, "\(process.outputText)")
        }
    }

    @Test func aStaleUnsavedEditRefusesTheSave() throws {
        let store = try Store()
        store.garage.isAutosaveEnabled = false
        var note = try #require(try store.garage.retrieve(StressNote.self, identifier: "n-0"))
        note.tokens.append("mine")
        try store.garage.park(&note)
        try store.other("append", "n-0", "theirs")
        #expect(throws: GarageError.self) { try store.garage.save() }
        try store.garage.discardUnsavedChanges(of: StressNote.self, identifier: "n-0")
        var fresh = try #require(try store.garage.retrieve(StressNote.self, identifier: "n-0"))
        fresh.tokens.append("mine")
        try store.garage.park(&fresh)
        try store.garage.save()
        #expect(try store.garage.retrieve(StressNote.self, identifier: "n-0")?.tokens == ["first", "theirs", "mine"])
    }

    @Test func denySeesAReferrerAnotherProcessAdded() async throws {
        let store = try Store()
        try store.garage.beginTransaction()
        try await store.garage.delete(StressNote.self, identifier: "x")
        try store.other("file", "nb", "x")
        await #expect(throws: GarageError.self) { try await store.garage.commitTransaction() }
        try store.garage.rollbackTransaction()
        #expect(try await store.garage.retrieve(StressNotebook.self, identifier: "nb")?.notes.map(\.id) == ["n-0", "n-1", "x"])
    }

    @Test func nullifyKeepsAnotherProcessesRename() async throws {
        let store = try Store()
        store.garage.isAutosaveEnabled = false
        try await store.garage.delete(StressNote.self, identifier: "n-1", rule: .nullify(in: StressNotebook.self))
        try store.other("rename", "nb", "Groceries")
        try await store.garage.save()
        let notebook = try #require(try await store.garage.retrieve(StressNotebook.self, identifier: "nb"))
        #expect(notebook.title == "Groceries")
        #expect(notebook.notes.map(\.id) == ["n-0"])
    }
}
