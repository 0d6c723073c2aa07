import Foundation
import Testing
@testable import GarageLite

/// Issue 41's proof: the chaos loop of ``SyncEnginePropertyTests`` with two types, notebooks
/// (a class) and notes filed in them (a row of their own), synced by each device's engine
/// against a ``ChaosServer``, in either order of registration.
///
/// Random steps: each device creates notes and notebooks, edits its own property (`a`, `b`;
/// the server `s`) and `shared`, files notes into notebooks, renames and deletes notebooks
/// (a device's deletion nullifies its notes' references; the server's leaves them); both
/// devices create a note under the same identifier offline; a notebook is deleted (by a device
/// or the server) while the other device files a new note in it; "screens" retrieve a note and
/// keep its notebook instance, then, many steps later (the notebook renamed since, maybe),
/// park the note with an edited property and that unchanged instance; syncs fail, lose their
/// answers, or are killed midway (a claim taken, maybe uploaded, never ended); devices go
/// offline for many steps.
///
/// Every save is journaled (who wrote which value to which property of which object). At
/// quiescence (no failures, every device synced until nothing changes) each device holds what
/// the server holds, and every save is in the final state, or written over by a later save of
/// the same property, or its object (for a filing: its notebook, by a deleter that saw the
/// filing) was deleted later, or a report named it: a conflict's `discardedFields`, a
/// `SyncEngineReport.replaced` entry, a `DownloadConflict.referencedBy` entry, or a conflict
/// that deleted the object. Anything else is a silent replacement, and there must be none.
///
/// `GARAGE_CHAOS_SEQUENCES=200 swift test --filter SyncEngineChaosTests` runs more sequences
/// (default 6, of `GARAGE_CHAOS_STEPS` = 40 steps); `GARAGE_CHAOS_SEED` repeats a run.
@Suite("The sync engine loses no save of notes and notebooks (issue 41)")
struct SyncEngineChaosTests {
    static let environment = ProcessInfo.processInfo.environment
    static let sequences = environment["GARAGE_CHAOS_SEQUENCES"].flatMap { Int($0) } ?? 6
    static let steps = environment["GARAGE_CHAOS_STEPS"].flatMap { Int($0) } ?? 40
    static let seed = environment["GARAGE_CHAOS_SEED"].flatMap { UInt64($0) } ?? 0x4348_414F_5334_31

    /// One save: `side` ("A", "B", "S") wrote `value` to `property` of `object` ("note:id",
    /// "notebook:id"); a filing is the property "notebook", its value a notebook's identifier.
    struct Save: CustomStringConvertible {
        var step: Int, side: String, object: String, property: String, value: String?
        var description: String { "\(step): \(side) wrote \(object).\(property) = \(value ?? "nil")" }
    }

    struct Journal {
        var saves: [Save] = []
        /// The steps at which each object was deleted, by whom, and (a notebook deleted on the
        /// server) the notes the server had in it then.
        var deletions: [String: [(step: Int, seen: Set<String>)]] = [:]
        /// What the reports named: by object, the properties (and "conflict-deleted").
        var named: [String: Set<String>] = [:]
        /// Renames a screen's old notebook instance undid when its note was parked.
        var undone: [String] = []
        var steps: [String] = []
    }

    final class Screen: @unchecked Sendable {
        let step: Int, note: String, notebook: ChaosNotebook
        init(step: Int, note: String, notebook: ChaosNotebook) {
            self.step = step
            self.note = note
            self.notebook = notebook
        }
    }

    final class Device: @unchecked Sendable {
        let name: String
        let property: WritableKeyPath<ChaosNote, String>
        let garage: Garage
        let engine: SyncEngine
        var screens: [Screen] = []
        var offlineUntil = 0

        init(_ name: String, _ property: WritableKeyPath<ChaosNote, String>, path: String, server: ChaosServer,
             notebooksFirst: Bool) throws {
            self.name = name
            self.property = property
            garage = try TestEngine.garage(path: path)
            var configuration = SyncEngine.Configuration()
            configuration.retryAfter = 0
            configuration.lease = 0
            configuration.batchSize = 3
            configuration.pollInterval = nil
            let types: [SyncedType] = notebooksFirst ? [.of(ChaosNotebook.self), .of(ChaosNote.self)]
                : [.of(ChaosNote.self), .of(ChaosNotebook.self)]
            engine = SyncEngine(garage: garage, transport: ChaosTransport(server: server), types: types,
                                configuration: configuration)
        }

        func notes() async throws -> [String: ServerNote] {
            Dictionary(uniqueKeysWithValues: try await garage.retrieveAll(ChaosNote.self).map {
                ($0.id, ServerNote(a: $0.a, b: $0.b, s: $0.s, shared: $0.shared, notebook: $0.notebook?.id))
            })
        }

        func notebooks() async throws -> [String: String] {
            Dictionary(uniqueKeysWithValues: try await garage.retrieveAll(ChaosNotebook.self).map { ($0.id, $0.name) })
        }
    }

    @Test func randomHistoriesLoseNoSaveSilently() async throws {
        var random = SplitMix64(state: Self.seed)
        for sequence in 0..<Self.sequences {
            try await Self.run(sequence: sequence, steps: Self.steps, &random)
        }
    }

    /// The chaos loop's first finding, alone: A and B create "S-1" offline; A's first upload of
    /// it fails (the transport throws: the server may have it, so the claim gave the row its
    /// data as base); B uploads its own; A's next upload is answered with a conflict and B's
    /// version. The server never had A's version, but the base stays (the claim that got the
    /// conflict was not the first send), so the merge takes B's version for a change of every
    /// property and drops A's `a` and `shared`, and the report says nothing was dropped.
    /// (A lost answer, or a sync killed after its claim, does the same.)
    @Test func aCreationWhoseFirstUploadFailedIsNotReplacedSilently() async throws {
        let directory = try TemporaryDirectory()
        let server = ChaosServer()
        let a = try Device("A", \.a, path: directory.path("a.garage"), server: server, notebooksFirst: true)
        let b = try Device("B", \.b, path: directory.path("b.garage"), server: server, notebooksFirst: true)
        var mine = ChaosNote(id: "S-1")
        mine.a = "A's"
        mine.shared = "A's"
        try await a.garage.park(mine)
        var theirs = ChaosNote(id: "S-1")
        theirs.b = "B's"
        theirs.shared = "B's"
        try await b.garage.park(theirs)
        await server.script(failing: 1)
        await #expect(throws: (any Error).self) { try await a.engine.sync() }
        try await b.engine.sync()
        let report = try await a.engine.sync()
        let stored = try #require(await server.notes["S-1"])
        let named = report.conflicts.filter { $0.object.identifier == "S-1" }.flatMap(\.discardedFields)
        #expect(stored.a == "A's" || named.contains("a"), "A's a is \(stored.a), and A's report names \(named)")
        #expect(stored.shared == "A's" || named.contains("shared"), "A's shared is \(stored.shared), and A's report names \(named)")
    }

    static func run(sequence: Int, steps: Int, _ random: inout SplitMix64) async throws {
        let directory = try TemporaryDirectory()
        let server = ChaosServer()
        let notebooksFirst = Bool.random(using: &random)
        let devices = [try Device("A", \.a, path: directory.path("a.garage"), server: server, notebooksFirst: notebooksFirst),
                       try Device("B", \.b, path: directory.path("b.garage"), server: server, notebooksFirst: notebooksFirst)]
        var journal = Journal()
        var created = 0
        let keepsDeletions = Bool.random(using: &random)
        await server.script(keepsDeletions: keepsDeletions)
        journal.steps.append("notebooks \(notebooksFirst ? "first" : "second"); the server \(keepsDeletions ? "keeps" : "forgets") deletions")

        func save(_ step: Int, _ side: String, _ object: String, _ property: String, _ value: String?) {
            journal.saves.append(Save(step: step, side: side, object: object, property: property, value: value))
        }
        /// Parks a new note of `device`, maybe filed in `notebook`.
        func create(_ device: Device, _ id: String, in notebook: ChaosNotebook?, shared: Bool, _ step: Int) async throws {
            var note = ChaosNote(id: id, notebook: notebook)
            note[keyPath: device.property] = "\(device.name)\(step)"
            if shared { note.shared = "\(device.name)\(step)" }
            try await device.garage.park(note)
            save(step, device.name, "note:\(id)", device.name.lowercased(), note[keyPath: device.property])
            if shared { save(step, device.name, "note:\(id)", "shared", note.shared) }
            if let notebook { save(step, device.name, "note:\(id)", "notebook", notebook.id) }
        }
        /// Deletes `notebook` on `device`: its notes there drop it (an edit each, journaled).
        func deleteNotebook(_ device: Device, _ id: String, _ step: Int) async throws {
            let filed = try await device.notes().filter { $0.value.notebook == id }.keys.sorted()
            guard try await device.garage.delete(ChaosNotebook.self, identifier: id, rule: .nullify(in: ChaosNote.self)) else { return }
            for note in filed { save(step, device.name, "note:\(note)", "notebook", nil) }
            journal.deletions["notebook:\(id)", default: []].append((step, []))
            journal.steps.append("\(step): \(device.name) deletes notebook \(id) (unfiling \(filed))")
        }
        func deleteNotebookOnServer(_ id: String, _ step: Int) async {
            let seen = Set(await server.notes.filter { $0.value.notebook == id }.keys)
            await server.deleteNotebook(id)
            journal.deletions["notebook:\(id)", default: []].append((step, seen))
            journal.steps.append("\(step): the server deletes notebook \(id) (its notes there: \(seen.sorted()))")
        }

        for step in 1...steps {
            let device = devices.randomElement(using: &random)!
            let other = devices.first { $0 !== device }!
            let noteIDs = Array(try await device.notes().keys).sorted()
            let notebooks = try await device.garage.retrieveAll(ChaosNotebook.self).sorted { $0.id < $1.id }
            switch Int.random(in: 0..<28, using: &random) {
            case 0, 1:
                created += 1
                let notebook = Bool.random(using: &random) ? notebooks.randomElement(using: &random) : nil
                try await create(device, "\(device.name)-\(created)", in: notebook, shared: false, step)
                journal.steps.append("\(step): \(device.name) creates note \(device.name)-\(created) in \(notebook?.id ?? "no notebook")")
            case 2:
                created += 1
                let id = "\(device.name)-nb\(created)"
                try await device.garage.park(ChaosNotebook(id: id, name: "\(device.name)\(step)"))
                save(step, device.name, "notebook:\(id)", "name", "\(device.name)\(step)")
                journal.steps.append("\(step): \(device.name) creates notebook \(id)")
            case 3, 4:
                guard let id = noteIDs.randomElement(using: &random),
                      var note = try await device.garage.retrieve(ChaosNote.self, identifier: id) else { continue }
                note[keyPath: device.property] = "\(device.name)\(step)"
                try await device.garage.park(note)
                save(step, device.name, "note:\(id)", device.name.lowercased(), "\(device.name)\(step)")
                journal.steps.append("\(step): \(device.name) edits \(id).\(device.name.lowercased())")
            case 5:
                guard let id = noteIDs.randomElement(using: &random),
                      var note = try await device.garage.retrieve(ChaosNote.self, identifier: id) else { continue }
                note.shared = "\(device.name)\(step)"
                try await device.garage.park(note)
                save(step, device.name, "note:\(id)", "shared", note.shared)
                journal.steps.append("\(step): \(device.name) edits \(id).shared")
            case 6, 7:
                // Files a note (an existing one) into a notebook.
                guard let id = noteIDs.randomElement(using: &random), let notebook = notebooks.randomElement(using: &random),
                      var note = try await device.garage.retrieve(ChaosNote.self, identifier: id) else { continue }
                note.notebook = notebook
                try await device.garage.park(note)
                save(step, device.name, "note:\(id)", "notebook", notebook.id)
                journal.steps.append("\(step): \(device.name) files \(id) into \(notebook.id)")
            case 8, 9:
                guard let notebook = notebooks.randomElement(using: &random) else { continue }
                notebook.name = "\(device.name)\(step)"
                try await device.garage.park(notebook)
                save(step, device.name, "notebook:\(notebook.id)", "name", notebook.name)
                journal.steps.append("\(step): \(device.name) renames \(notebook.id)")
            case 10:
                if Bool.random(using: &random), let id = noteIDs.randomElement(using: &random) {
                    _ = try await device.garage.delete(ChaosNote.self, identifier: id)
                    journal.deletions["note:\(id)", default: []].append((step, []))
                    journal.steps.append("\(step): \(device.name) deletes note \(id)")
                } else if let notebook = notebooks.randomElement(using: &random) {
                    try await deleteNotebook(device, notebook.id, step)
                }
            case 11:
                // The server (another client) edits a note, renames or deletes a notebook, deletes a note.
                let value = "S\(step)"
                switch Int.random(in: 0..<5, using: &random) {
                case 0, 1:
                    guard let id = await server.notes.keys.sorted().randomElement(using: &random) else { continue }
                    if Bool.random(using: &random) {
                        await server.editNote(id) { $0.s = value }
                        save(step, "S", "note:\(id)", "s", value)
                    } else {
                        await server.editNote(id) { $0.shared = value }
                        save(step, "S", "note:\(id)", "shared", value)
                    }
                    journal.steps.append("\(step): the server edits \(id)")
                case 2:
                    guard let id = await server.notebooks.keys.sorted().randomElement(using: &random) else { continue }
                    await server.storeNotebook(id, name: value)
                    save(step, "S", "notebook:\(id)", "name", value)
                    journal.steps.append("\(step): the server renames \(id)")
                case 3:
                    guard let id = await server.notebooks.keys.sorted().randomElement(using: &random) else { continue }
                    await deleteNotebookOnServer(id, step)
                default:
                    guard let id = await server.notes.keys.sorted().randomElement(using: &random) else { continue }
                    await server.deleteNote(id)
                    journal.deletions["note:\(id)", default: []].append((step, []))
                    journal.steps.append("\(step): the server deletes note \(id)")
                }
            case 12:
                // Both devices create a note under one identifier, offline.
                created += 1
                let id = "S-\(created)"
                for each in devices {
                    let notebook = Bool.random(using: &random)
                        ? try await each.garage.retrieveAll(ChaosNotebook.self).sorted { $0.id < $1.id }.randomElement(using: &random) : nil
                    try await create(each, id, in: notebook, shared: true, step)
                    each.offlineUntil = max(each.offlineUntil, step + Int.random(in: 0...4, using: &random))
                }
                journal.steps.append("\(step): A and B both create note \(id) offline")
            case 13:
                // A notebook both know is deleted (by the other device or the server) while this
                // device, offline, files a new note in it.
                let serverNotebooks = await server.notebooks
                guard let notebook = notebooks.filter({ serverNotebooks[$0.id] != nil }).randomElement(using: &random) else { continue }
                created += 1
                try await create(device, "\(device.name)-\(created)", in: notebook, shared: false, step)
                device.offlineUntil = max(device.offlineUntil, step + Int.random(in: 2...10, using: &random))
                journal.steps.append("\(step): \(device.name), offline, files new note \(device.name)-\(created) in \(notebook.id)")
                if Bool.random(using: &random), try await other.garage.retrieve(ChaosNotebook.self, identifier: notebook.id) != nil {
                    try await deleteNotebook(other, notebook.id, step)
                } else {
                    await deleteNotebookOnServer(notebook.id, step)
                }
            case 14, 15:
                // A screen opens a note, and keeps its notebook instance.
                var filed = try await device.garage.retrieveAll(ChaosNote.self).filter { $0.notebook != nil }.sorted { $0.id < $1.id }
                if filed.isEmpty, let id = noteIDs.randomElement(using: &random), let notebook = notebooks.randomElement(using: &random),
                   var note = try await device.garage.retrieve(ChaosNote.self, identifier: id) {
                    note.notebook = notebook
                    try await device.garage.park(note)
                    save(step, device.name, "note:\(id)", "notebook", notebook.id)
                    journal.steps.append("\(step): \(device.name) files \(id) into \(notebook.id)")
                    filed = [try #require(try await device.garage.retrieve(ChaosNote.self, identifier: id))]
                }
                guard let note = filed.randomElement(using: &random), let notebook = note.notebook else { continue }
                device.screens.append(Screen(step: step, note: note.id, notebook: notebook))
                journal.steps.append("\(step): a screen of \(device.name) opens \(note.id) in \(notebook.id) (\(notebook.name))")
                // Elsewhere, the notebook is renamed meanwhile (the other device, or the server).
                if Bool.random(using: &random), let renamed = try await other.garage.retrieve(ChaosNotebook.self, identifier: notebook.id) {
                    renamed.name = "\(other.name)\(step)"
                    try await other.garage.park(renamed)
                    save(step, other.name, "notebook:\(notebook.id)", "name", renamed.name)
                    journal.steps.append("\(step): \(other.name) renames \(notebook.id)")
                } else if await server.notebooks[notebook.id] != nil {
                    await server.storeNotebook(notebook.id, name: "S\(step)")
                    save(step, "S", "notebook:\(notebook.id)", "name", "S\(step)")
                    journal.steps.append("\(step): the server renames \(notebook.id)")
                }
                // The rename reaches the screen's device (its row moves on; the screen's instance doesn't).
                for syncing in [other, device] where syncing.offlineUntil < step {
                    let report = try await syncing.engine.sync()
                    name(report, &journal)
                    journal.steps.append("\(step): \(syncing.name) syncs\(describe(report))")
                }
            case 16, 17, 18:
                // A screen opened long ago edits its note and parks it with the notebook it holds.
                guard let index = device.screens.indices.filter({ step - device.screens[$0].step >= 3 }).randomElement(using: &random)
                else { continue }
                let screen = device.screens.remove(at: index)
                guard var note = try await device.garage.retrieve(ChaosNote.self, identifier: screen.note) else { continue }
                let current = note.notebook?.name
                if note.notebook?.id == screen.notebook.id { note.notebook = screen.notebook }
                note[keyPath: device.property] = "\(device.name)\(step)"
                try await device.garage.park(note)
                // The old instance, unchanged, is no edit: the notebook reads as before the park.
                if let current, note.notebook === screen.notebook,
                   let after = try await device.garage.retrieve(ChaosNotebook.self, identifier: screen.notebook.id)?.name, after != current {
                    journal.undone.append("\(step): the screen of \(device.name) opened at \(screen.step) wrote \(screen.notebook.id).name "
                                          + "back from \(current) to \(after)")
                }
                save(step, device.name, "note:\(screen.note)", device.name.lowercased(), "\(device.name)\(step)")
                journal.steps.append("\(step): the screen of \(device.name) opened at \(screen.step) parks \(screen.note) "
                                     + "holding \(screen.notebook.id) (\(screen.notebook.name); it reads \(current ?? "nil"))")
            case 19:
                device.offlineUntil = step + Int.random(in: 5...15, using: &random)
                journal.steps.append("\(step): \(device.name) goes offline until \(device.offlineUntil)")
            case 20:
                guard device.offlineUntil < step else { continue }
                // Killed midway: a claim taken, its batch maybe stored by the server, never ended.
                if Bool.random(using: &random) {
                    let claim = try await device.garage.claim(ChaosNote.self, limit: 2)
                    if !claim.isEmpty, Bool.random(using: &random) {
                        let changes = zip(claim.objects, claim.identifiers).enumerated().map {
                            SyncChange(identifier: $1.1, object: $1.0, version: claim.serverVersions[$0])
                        }
                        _ = try? await ChaosTransport(server: server).upload(UploadBatch(typeName: ChaosServer.noteType, changes: changes))
                    }
                    journal.steps.append("\(step): \(device.name) is killed during an upload of notes \(claim.identifiers)")
                } else {
                    let claim = try await device.garage.claim(ChaosNotebook.self, limit: 2)
                    if !claim.isEmpty, Bool.random(using: &random) {
                        let changes = zip(claim.objects, claim.identifiers).enumerated().map {
                            SyncChange(identifier: $1.1, object: $1.0, version: claim.serverVersions[$0])
                        }
                        _ = try? await ChaosTransport(server: server).upload(UploadBatch(typeName: ChaosServer.notebookType,
                                                                                         changes: changes))
                    }
                    journal.steps.append("\(step): \(device.name) is killed during an upload of notebooks \(claim.identifiers)")
                }
            default:
                guard device.offlineUntil < step else { continue }
                let failure = Int.random(in: 0..<4, using: &random)
                await server.script(failing: failure == 0 ? 1 : 0, losing: failure == 1 ? 1 : 0)
                let report = try? await device.engine.sync()
                journal.steps.append("\(step): \(device.name) syncs" + [", the upload fails", ", the answer is lost", "", ""][failure]
                                     + (report.map { describe($0) } ?? ""))
                if let report { name(report, &journal) }
                await server.script()
            }
        }
        // Quiescence: no more failures, sync until nothing changes.
        await server.script()
        for round in 0..<6 {
            for device in devices {
                let report = try await device.engine.sync()
                name(report, &journal)
                let text = describe(report)
                if !text.isEmpty { journal.steps.append("quiescence \(round): \(device.name) syncs\(text)") }
            }
        }
        let context = Comment(rawValue: "sequence \(sequence) (seed \(Self.seed)):\n" + journal.steps.joined(separator: "\n"))
        let serverNotebooks = await server.notebooks
        let serverNotes = await server.notes.mapValues { note in
            var note = note
            if let id = note.notebook, serverNotebooks[id] == nil { note.notebook = nil }
            return note
        }
        for device in devices {
            let notes = try await device.notes(), notebooks = try await device.notebooks()
            #expect(notes == serverNotes, "\(device.name)'s notes differ from the server's: \(notes) \(serverNotes)\n\(context)")
            #expect(notebooks == serverNotebooks, "\(device.name)'s notebooks differ from the server's: \(notebooks) \(serverNotebooks)\n\(context)")
            #expect(try await device.garage.count(ChaosNote.self, withStatus: .notSynced) == 0, context)
            #expect(try await device.garage.count(ChaosNotebook.self, withStatus: .notSynced) == 0, context)
        }
        let silent = journal.undone + silentReplacements(journal, notes: serverNotes, notebooks: serverNotebooks)
        #expect(silent.isEmpty, "\(silent.count) silent replacements:\n\(silent.joined(separator: "\n"))\n\(context)")
    }

    /// The saves neither in the final state, nor written over later, nor deleted, nor named.
    static func silentReplacements(_ journal: Journal, notes: [String: ServerNote], notebooks: [String: String]) -> [String] {
        var silent: [String] = []
        for save in journal.saves {
            let parts = save.object.split(separator: ":", maxSplits: 1).map(String.init)
            let (kind, id) = (parts[0], parts[1])
            let final: String??
            if kind == "notebook" {
                final = notebooks[id].map { .some($0) }
            } else if let note = notes[id] {
                switch save.property {
                case "a": final = .some(note.a)
                case "b": final = .some(note.b)
                case "s": final = .some(note.s)
                case "shared": final = .some(note.shared)
                default: final = .some(note.notebook)
                }
            } else {
                final = nil
            }
            if let final, final == save.value { continue }
            let overwritten = journal.saves.contains {
                $0.object == save.object && $0.property == save.property && $0.step > save.step
            }
            if overwritten { continue }
            if journal.deletions[save.object, default: []].contains(where: { $0.step > save.step }) { continue }
            // A filing whose notebook a deleter that saw it deleted later (a device's deletion
            // unfiles its notes, journaled as saves of their own).
            if save.property == "notebook", let notebook = save.value,
               journal.deletions["notebook:\(notebook)", default: []].contains(where: { $0.step > save.step && $0.seen.contains(id) }) {
                continue
            }
            let named = journal.named[save.object, default: []]
            if named.contains(save.property) || named.contains("conflict-deleted") { continue }
            silent.append("\(save) is \(final.map { $0 ?? "nil" } ?? "gone"), and no report named it")
        }
        return silent
    }

    /// What a report names, by object: the properties a merge dropped or a later version
    /// replaced (a nested path by its first key too), the filings of the referrers of a
    /// deleted notebook, and the objects a conflict deleted.
    static func name(_ report: SyncEngineReport, _ journal: inout Journal) {
        func key(_ object: ObjectKey) -> String {
            (object.typeName == ChaosServer.notebookType ? "notebook:" : "note:") + object.identifier
        }
        func insert(_ fields: [String], for object: ObjectKey) {
            for field in fields {
                journal.named[key(object), default: []].insert(field)
                if let first = field.split(separator: ".").first { journal.named[key(object), default: []].insert(String(first)) }
            }
        }
        for conflict in report.conflicts {
            insert(conflict.discardedFields, for: conflict.object)
            for referrer in conflict.referencedBy { insert(["notebook"], for: referrer) }
            if conflict.resolution == .tookDownloaded, !conflict.referencedBy.isEmpty {
                journal.named[key(conflict.object), default: []].insert("conflict-deleted")
            }
        }
        for replaced in report.replaced {
            insert(replaced.fields, for: replaced.object)
            if replaced.isDeletion { journal.named[key(replaced.object), default: []].insert("conflict-deleted") }
        }
    }

    /// The conflicts and replaced uploads of a report, for the journal's steps.
    static func describe(_ report: SyncEngineReport) -> String {
        var parts = report.conflicts.map { conflict in
            "\(conflict)" + (conflict.discardedFields.isEmpty ? "" : " dropping \(conflict.discardedFields)")
        }
        parts += report.replaced.map(\.description)
        return parts.isEmpty ? "" : ": " + parts.joined(separator: "; ")
    }
}
