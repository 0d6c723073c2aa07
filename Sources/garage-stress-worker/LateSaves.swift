// Late saves under stress: the processes of SyncStressTests' late-save test, and the one-shot
// writes of the cross-process tests of WriteTimeCheckTests. They share one store of
// `StressNote`s and `StressNotebook`s (notebook `nb` holds notes `n-0` ..< `n-<count>`).
//
//     garage-stress-worker <store-path> late-editor <name> <seed> <rounds>
//     garage-stress-worker <store-path> late-downloader <name> <seed> <rounds>
//     garage-stress-worker <store-path> note append <id> <token>        (one autosaved edit)
//     garage-stress-worker <store-path> note rename <notebook id> <title>
//     garage-stress-worker <store-path> note file <notebook id> <note id>  (adds the note)
//
// A late editor works with autosave off: each round it appends a token of its own to a few
// notes (some through the notebook, parked with `children: .keepStored`), waits, and saves.
// A save refused as stale (another process changed a note since) is followed as its error
// says: the stale change is discarded, the note retrieved again, the tokens appended again,
// and the save tried again. After each save it prints `SAVED <token> <note>` for the tokens it
// wrote, and checks that every note and notebook retrieves.
//
// Each editor also has a note of its own, `<name>-own`, which it deletes (a stale copy's
// deletion is refused like a stale edit, and done again on the note as it is) and creates
// again; it prints `DELETED <id>` after the save that deleted it.
//
// A late downloader plays the server: it downloads notes that carry a token of its own
// (`srv-…`), merged with the local version (`.merge`: the union of the tokens), and prints
// `MERGED <token> <note>` once the download committed. It also edits and deletes the editors' own
// notes: a deletion against a local edit goes to `.resolve`, which keeps the edit.
//
// The test checks, at the end, that every SAVED and MERGED token of the shared notes is in its
// note, and every token an editor saved to its own note since its last deletion: a stale save
// that landed, a child edit dropped unreported, or a deletion that overrode an edit unasked
// would lose one.
import Foundation
import GarageLite
import GarageStressModels

/// The notes of the late-save test.
private func noteIdentifiers(_ count: Int) -> [String] { (0..<count).map { "n-\($0)" } }

/// Creates notebook `nb` with `count` empty notes, unless it exists.
private func prepareNotebook(_ garage: Garage, count: Int) throws {
    guard try garage.retrieve(StressNotebook.self, identifier: "nb") == nil else { return }
    do {
        try garage.park(StressNotebook(id: "nb", title: "Notes",
                                       notes: noteIdentifiers(count).map { StressNote(id: $0, tokens: []) }))
    } catch GarageError.staleObject {
        // Another process created it first.
    }
}

/// Saves `garage`'s unsaved changes; each note a stale refusal names is discarded, read
/// again and given `pending`'s tokens again (or deleted again, when `deleting` names it), until
/// the save goes through. A note of this editor's own that is gone meanwhile (a deletion from
/// the server) is created again with the tokens. Returns how many saves were refused.
private func saveFollowingTheAdvice(_ garage: Garage, pending: [String: [String]], deleting: Set<String> = [],
                                    errors: Errors, who: String) throws -> Int {
    var refusals = 0
    while true {
        do {
            try garage.save()
            return refusals
        } catch GarageError.staleObject(let type, let identifier, _, _) {
            refusals += 1
            if ProcessInfo.processInfo.environment["LATE_TRACE"] != nil { print("REFUSED \(type) \(identifier)") }
            if refusals > 1_000 {
                errors.report("\(who): 1,000 stale refusals in a row, the last for \(type)(\(identifier))")
                throw GarageError.staleObject(typeName: type, identifier: identifier, parkedRevision: 0, storedRevision: 0)
            }
            if type == "StressNotebook" {
                try garage.discardUnsavedChanges(of: StressNotebook.self, identifier: identifier)
                continue
            }
            try garage.discardUnsavedChanges(of: StressNote.self, identifier: identifier)
            if deleting.contains(identifier) {
                while let note = try garage.retrieve(StressNote.self, identifier: identifier) {
                    do {
                        try garage.delete(note)
                        break
                    } catch GarageError.staleObject {
                        continue // changed since the retrieve: delete the version stored now
                    } catch GarageError.failedToRetrieveObject {
                        break // deleted meanwhile (by the server)
                    }
                }
                continue
            }
            for token in pending[identifier] ?? [] {
                if identifier == "\(who)-own" {
                    try appendOrCreate(token, to: identifier, in: garage)
                } else if !(try append(token, to: identifier, in: garage)) {
                    errors.report("\(who): \(identifier) is gone")
                }
            }
        }
    }
}

/// Appends `token` to note `id` and parks it (unsaved when autosave is off); a park refused
/// as stale (another process committed between the retrieve and the park) is done again on
/// the note as it is now. Returns whether the note exists.
private func append(_ token: String, to id: String, in garage: Garage) throws -> Bool {
    while true {
        guard var note = try garage.retrieve(StressNote.self, identifier: id) else { return false }
        note.tokens.append(token)
        do {
            try garage.park(&note)
            return true
        } catch GarageError.staleObject {
            continue
        }
    }
}

/// Appends `token` to note `id`, creating the note when there is none; a creation refused
/// because another process created it meanwhile appends to that one.
private func appendOrCreate(_ token: String, to id: String, in garage: Garage) throws {
    while !(try append(token, to: id, in: garage)) {
        do {
            try garage.park(StressNote(id: id, tokens: [token]))
            return
        } catch GarageError.staleObject {
            continue
        }
    }
}

/// Every note and notebook retrieves.
private func checkEverythingRetrieves(_ garage: Garage, errors: Errors, who: String) {
    do {
        _ = try garage.retrieveAll(StressNotebook.self)
        _ = try garage.retrieveAll(StressNote.self)
    } catch {
        errors.report("\(who): the store no longer reads: \(error)")
    }
}

/// The late editor (see the top of this file).
func runLateEditor(storePath: String, name: String, seed: String, rounds: Int, count: Int, errors: Errors) throws {
    let garage = try TestStores.open(path: storePath)
    try prepareNotebook(garage, count: count)
    garage.isAutosaveEnabled = false
    var random = SplitMix64(seed: seed)
    var refusals = 0, kept = 0
    let own = "\(name)-own"
    for round in 0..<rounds {
        var pending: [String: [String]] = [:]
        var deleting: Set<String> = []
        for step in 0..<Int.random(in: 1...3, using: &random) {
            let token = "\(name).\(round).\(step)"
            let id = "n-\(Int.random(in: 0..<count, using: &random))"
            if Int.random(in: 0..<5, using: &random) == 0, pending[own] == nil, !deleting.contains(own) {
                // Its own note, which it deletes and creates again, and the server deletes too.
                if let note = try garage.retrieve(StressNote.self, identifier: own), Int.random(in: 0..<3, using: &random) == 0 {
                    do {
                        try garage.delete(note)
                        deleting.insert(own)
                    } catch GarageError.staleObject, GarageError.failedToRetrieveObject {
                        // Changed or deleted since the retrieve: not deleted this round.
                    }
                } else {
                    try appendOrCreate(token, to: own, in: garage)
                    pending[own, default: []].append(token)
                }
                continue
            } else if Int.random(in: 0..<4, using: &random) == 0 {
                // Through the notebook: a child the store changed meanwhile is kept as stored
                // and reported, and the edit is made again on the stored version.
                guard var notebook = try garage.retrieve(StressNotebook.self, identifier: "nb"),
                      let index = notebook.notes.firstIndex(where: { $0.id == id }) else {
                    errors.report("\(name): notebook nb or its \(id) is missing")
                    continue
                }
                notebook.notes[index].tokens.append(token)
                if Int.random(in: 0..<3, using: &random) == 0 { Thread.sleep(forTimeInterval: 0.002) }
                let report = try garage.park(&notebook, children: .keepStored)
                if report.keptChildren.contains(ObjectKey(typeName: "StressNote", identifier: id)) {
                    kept += 1
                    guard try append(token, to: id, in: garage) else { continue }
                }
            } else if !(try append(token, to: id, in: garage)) {
                errors.report("\(name): \(id) is missing")
                continue
            }
            pending[id, default: []].append(token)
        }
        // Late: other processes commit meanwhile.
        Thread.sleep(forTimeInterval: Double(Int.random(in: 0...8, using: &random)) / 1000)
        refusals += try saveFollowingTheAdvice(garage, pending: pending, deleting: deleting, errors: errors, who: name)
        for id in deleting { print("DELETED \(id)") }
        for (id, tokens) in pending { for token in tokens { print("SAVED \(token) \(id)") } }
        if ProcessInfo.processInfo.environment["LATE_TRACE"] != nil {
            for id in pending.keys {
                if let note = try garage.retrieve(StressNote.self, identifier: id), let meta = try garage.metadata(StressNote.self, identifier: id) {
                    print("TRACE \(id) r\(meta.revision) \(note.tokens.joined(separator: ","))")
                }
            }
        }
        checkEverythingRetrieves(garage, errors: errors, who: name)
    }
    print("STATS \(name): \(rounds) saves, \(refusals) refused as stale, \(kept) children kept as stored")
}

/// The late downloader (see the top of this file).
func runLateDownloader(storePath: String, name: String, seed: String, rounds: Int, count: Int, errors: Errors) throws {
    let garage = try TestStores.open(path: storePath)
    try prepareNotebook(garage, count: count)
    var random = SplitMix64(seed: seed)
    var conflicts = 0
    var asked = 0
    for round in 0..<rounds {
        let token = "srv-\(name).\(round)"
        if Int.random(in: 0..<3, using: &random) == 0 {
            // An editor's own note: the server edits or deletes it. A deletion against a local
            // edit must be asked about, and is answered by keeping the edit.
            let own = "\(["a", "b", "c"].randomElement(using: &random) ?? "a")-own"
            if Int.random(in: 0..<2, using: &random) == 0 {
                let sides = Protected<[String]>([])
                let report = try garage.deleteDownloaded(StressNote.self, identifiers: [own], onConflict: .resolve { local, _ in
                    if case .edited = local { sides.write { $0.append("edited") } } else { sides.write { $0.append("\(local)") } }
                    return .keepLocal
                })
                asked += report.conflicts.count
                if sides.read({ $0 }) != Array(repeating: "edited", count: report.conflicts.count) {
                    errors.report("\(name): a deletion of \(own) asked about \(sides.read { $0 }) for \(report.conflicts)")
                }
                if report.conflicts.contains(where: { $0.resolution != .keptLocal }) {
                    errors.report("\(name): a deletion of \(own) overrode a local edit: \(report)")
                }
            } else {
                try garage.parkDownloaded([StressNote(id: own, tokens: [token], syncStatus: .synced)],
                                          onConflict: .merge { local, downloaded in
                    var merged = local
                    merged.tokens += downloaded.tokens.filter { !local.tokens.contains($0) }
                    return merged
                })
            }
            checkEverythingRetrieves(garage, errors: errors, who: name)
            continue
        }
        let id = "n-\(Int.random(in: 0..<count, using: &random))"
        let report = try garage.parkDownloaded([StressNote(id: id, tokens: [token], syncStatus: .synced)],
                                               onConflict: .merge { local, downloaded in
            var merged = local
            merged.tokens += downloaded.tokens.filter { !local.tokens.contains($0) }
            return merged
        })
        conflicts += report.conflicts.count
        if report.conflicts.contains(where: { $0.resolution != .merged }) {
            errors.report("\(name): a download of \(id) was not merged: \(report.conflicts)")
        }
        if report.conflicts.isEmpty {
            errors.report("\(name): a download of \(id) did not conflict with the local edits it would have replaced")
        }
        print("MERGED \(token) \(id)")
        checkEverythingRetrieves(garage, errors: errors, who: name)
        Thread.sleep(forTimeInterval: Double(Int.random(in: 0...4, using: &random)) / 1000)
    }
    print("STATS \(name): \(rounds) downloads, \(conflicts) merged, \(asked) deletions against local edits asked")
}

/// One autosaved write of the cross-process tests: `append`, `rename` or `file` (see the top).
func runNoteCommand(storePath: String, arguments: [String], errors: Errors) throws {
    let garage = try TestStores.open(path: storePath)
    switch (arguments.first, arguments.count) {
    case ("append", 3):
        guard var note = try garage.retrieve(StressNote.self, identifier: arguments[1]) else {
            return errors.report("note append: no note \(arguments[1])")
        }
        note.tokens.append(arguments[2])
        try garage.park(&note)
    case ("rename", 3):
        guard var notebook = try garage.retrieve(StressNotebook.self, identifier: arguments[1]) else {
            return errors.report("note rename: no notebook \(arguments[1])")
        }
        notebook.title = arguments[2]
        try garage.park(&notebook)
    case ("file", 3):
        guard var notebook = try garage.retrieve(StressNotebook.self, identifier: arguments[1]),
              let note = try garage.retrieve(StressNote.self, identifier: arguments[2]) else {
            return errors.report("note file: no notebook \(arguments[1]) or note \(arguments[2])")
        }
        notebook.notes.append(note)
        try garage.park(&notebook)
    default:
        errors.report("usage: note append <id> <token> | rename <notebook> <title> | file <notebook> <note>")
    }
}

/// Runs a `late-…` role or a `note` command; never returns.
func runLateRole(storePath: String, role: String, arguments: [String]) -> Never {
    let errors = Errors()
    do {
        if role == "note" {
            try runNoteCommand(storePath: storePath, arguments: arguments, errors: errors)
        } else {
            guard arguments.count == 3, let rounds = Int(arguments[2]), rounds > 0 else {
                print("ERROR usage: garage-stress-worker <store-path> \(role) <name> <seed> <rounds>")
                exit(2)
            }
            let (name, seed) = (arguments[0], arguments[1])
            if role == "late-editor" {
                try runLateEditor(storePath: storePath, name: name, seed: seed, rounds: rounds, count: 6, errors: errors)
            } else {
                try runLateDownloader(storePath: storePath, name: name, seed: seed, rounds: rounds, count: 6, errors: errors)
            }
        }
    } catch {
        errors.report("\(role) threw: \(error)")
    }
    exit(errors.count == 0 ? 0 : 1)
}
