// garage-demo: two devices, each with its own garage file, edit and delete notes and sync them
// through a fake server with the same two-way sync job (SyncJob.swift); at the end, the
// devices and the server must hold the same notes.
import Foundation
import GarageLite

/// A device: its own garage file, and the sync job every device runs.
struct Device {
    let name: String
    let garage: Garage
    let job: SyncJob

    init(_ name: String, in folder: URL, server: FakeServer) throws {
        self.name = name
        garage = try Garage(url: folder.appendingPathComponent("\(name).sqlite"))
        var job = SyncJob(garage: garage, server: server)
        job.retryAfter = 1   // the demo doesn't wait a minute after a failed upload
        self.job = job
    }

    func say(_ line: String) {
        print("   \(name.padding(toLength: 7, withPad: " ", startingAt: 0)) \(line)")
    }

    // The app's edits: synchronous calls, as from a button's action.

    func add(_ id: String, title: String, items: [String]) throws {
        try garage.park(Note(id: id, title: title, items: items))
        say("adds \(id): \(list(items))")
    }

    func addItem(_ item: String, to id: String) throws {
        guard var note = try garage.retrieve(Note.self, identifier: id) else { throw DemoFailure("\(id) is missing") }
        note.items.append(item)
        try garage.park(note)   // the note says .synced; its edit is stored .notSynced
        say("adds \"\(item)\" to \(id)")
    }

    func delete(_ id: String) throws {
        try garage.delete(Note.self, identifier: id)   // leaves a tombstone for the sync job
        say("deletes \(id)")
    }

    /// Runs the sync job, and says what it did.
    func sync(_ comment: String = "") async throws {
        let report = try await job.run()
        let uploaded = report.uploads.flatMap(\.synced)
        let conflicts = report.downloads.flatMap(\.conflicts)
        let merged = conflicts.filter { $0.resolution == .merged }.map(\.object.identifier)
        var lines: [String] = []
        let firstUploads = uploaded.filter { !merged.contains($0) }
        if !firstUploads.isEmpty { lines.append("uploaded \(list(firstUploads))") }
        let deletions = report.uploads.flatMap(\.deletionsUploaded)
        if !deletions.isEmpty { lines.append("uploaded the deletion of \(list(deletions))") }
        for (id, error) in report.rejected.sorted(by: { $0.key < $1.key }) {
            lines.append("upload of \(id) rejected (\(error))")
        }
        if let failure = report.failure {
            lines.append("upload failed (\(failure)): released, to retry in \(Int(job.retryAfter)) s")
        }
        // Its own uploads come back too, with the server's revision: not news.
        let downloaded = report.downloads.flatMap(\.applied).filter { !uploaded.contains($0) }
        if !downloaded.isEmpty { lines.append("downloaded \(list(downloaded))") }
        for conflict in conflicts {
            lines.append("downloaded \(conflict.object.identifier), which has a local edit: \(conflict.resolution)")
        }
        let deleted = report.downloads.flatMap(\.deleted)
        if !deleted.isEmpty { lines.append("deleted \(list(deleted)), as the server did") }
        if !merged.isEmpty { lines.append("uploaded the merge of \(list(merged))") }
        if !report.held.isEmpty { lines.append("held, after too many failed uploads: \(report.held)") }
        let text = lines.isEmpty ? "nothing to do" : lines.joined(separator: "; ")
        say("syncs\(comment): " + (text.count <= 80 ? text : lines.joined(separator: "\n" + String(repeating: " ", count: 18))))
    }

    func notes() throws -> [String: Note] {
        Dictionary(uniqueKeysWithValues: try garage.retrieveAll(Note.self).map { ($0.id, $0) })
    }
}

/// A note as version 1 of the app stored it: its items were called `lines`. (Version 1's type,
/// kept here only to write what it wrote: an app has only the current one.)
struct NoteVersion1: Codable, Identifiable, Syncable, StoredTypeNamed {
    static let storedTypeName = "Note"
    static let sharesStoredTypeName = true
    var id: String
    var title: String
    var lines: [String]
    var serverRevision = 0
    var syncStatus: SyncStatus = .notSynced
}

/// Version 2 renamed `lines` to `items`: old notes read under the new name, without a migration.
extension Note: LegacyKeyed {
    static let legacyKeys = ["items": ["lines"]]
}

struct DemoFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func list(_ identifiers: [String]) -> String { identifiers.joined(separator: ", ") }

/// The notes as the server sees them: without the devices' sync statuses.
func content(_ notes: [String: Note]) -> [String: Note] {
    notes.mapValues { note in
        var note = note
        note.syncStatus = .undetermined
        return note
    }
}

// `--keep FOLDER` writes the two garage files there and keeps them, to look at them with the
// `garage` tool (the DocC article "The garage tool"); by default they go in a temporary folder, deleted at the end.
let keptFolder = CommandLine.arguments.firstIndex(of: "--keep").flatMap { index in
    index + 1 < CommandLine.arguments.count ? URL(fileURLWithPath: CommandLine.arguments[index + 1]) : nil
}
if CommandLine.arguments.contains("--keep"), keptFolder == nil {
    print("usage: garage-demo [--keep FOLDER]")
    exit(64)
}
let folder = keptFolder
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("garage-demo-\(UUID().uuidString.prefix(8))")
var converged = false
do {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let server = FakeServer()
    let phone = try Device("phone", in: folder, server: server)
    let laptop = try Device("laptop", in: folder, server: server)
    print("A phone and a laptop, each with its own garage file (in \(folder.path)\(keptFolder == nil ? ", deleted at the end" : "")),")
    print("sync notes through one server. Each sync uploads the device's changes, then downloads the server's.")

    print("\n0. The phone kept a note from version 1 of the app, which called items \"lines\".")
    try phone.garage.park(NoteVersion1(id: "recipes", title: "Recipes", lines: ["flour", "sugar"]))
    let recipes = try phone.garage.retrieve(Note.self, identifier: "recipes")
    phone.say("version 2 reads recipes' items: \(list(recipes?.items ?? [])) (Note: LegacyKeyed)")

    print("\n1. Both create notes, then sync.")
    try phone.add("groceries", title: "Groceries", items: ["milk", "bread"])
    try phone.add("packing", title: "Packing", items: ["passport"])
    try laptop.add("books", title: "Books", items: ["Middlemarch"])
    try await phone.sync()
    try await laptop.sync()
    try await phone.sync()
    phone.say("has downloaded up to server revision \(try phone.garage.value(for: NotesSync.cursor)) (a setting: NotesSync.cursor)")

    print("\n2. The phone edits a note, the laptop deletes another; both sync.")
    try phone.addItem("eggs", to: "groceries")
    try laptop.delete("packing")
    try await phone.sync()
    try await laptop.sync()
    try await phone.sync()

    print("\n3. A conflict: both add to \"books\" while offline.")
    try phone.addItem("Dune", to: "books")
    try laptop.addItem("Emma", to: "books")
    try await phone.sync()
    try await laptop.sync()
    try await phone.sync()
    print("   The server rejects an edit based on an older revision than its own; the laptop's job then")
    print("   downloads the server's version, merges (.merge: the server's items, plus the local ones")
    print("   it lacks), and uploads the merge. Both now have: \(list(try phone.notes()["books"]?.items ?? []))")

    print("\n4. A failed upload is released, and retried later.")
    try laptop.addItem("coffee", to: "groceries")
    await server.setReachable(false)
    try await laptop.sync(" (server down)")
    await server.setReachable(true)
    try await laptop.sync(" (server up)")
    print("   The laptop still has \(try laptop.garage.count(Note.self, withStatus: .notSynced)) note to upload, but no claim takes it for 1 s (retryAfter).")
    print("   Each failed upload counts; after \(laptop.garage.maximumUploadAttempts) (maximumUploadAttempts) the note would be held.")
    try await Task.sleep(nanoseconds: 1_200_000_000)
    try await laptop.sync(" (1 s later)")
    try await phone.sync()

    let serverNotes = await server.notes()
    let phoneNotes = content(try phone.notes())
    let laptopNotes = content(try laptop.notes())
    let pending = try phone.garage.syncStatusCounts([.notSynced, .syncing]).merging(
        laptop.garage.syncStatusCounts([.notSynced, .syncing])) { $0.merging($1, uniquingKeysWith: +) }
    converged = phoneNotes == serverNotes && laptopNotes == serverNotes && pending.isEmpty
    print("\nThe phone, the laptop and the server hold \(converged ? "the same notes:" : "DIFFERENT notes.")")
    for (holder, notes) in converged ? [("", serverNotes)] : [("server", serverNotes), ("phone", phoneNotes), ("laptop", laptopNotes)] {
        for note in notes.values.sorted(by: { $0.id < $1.id }) {
            print("   \(holder.isEmpty ? "" : holder + ": ")\(note.id) (server revision \(note.serverRevision)): \(list(note.items))")
        }
    }
    if !pending.isEmpty { print("   not uploaded yet: \(pending)") }
} catch {
    print("garage-demo failed: \(error)")
}
if keptFolder == nil { try? FileManager.default.removeItem(at: folder) }
exit(converged ? 0 : 1)
