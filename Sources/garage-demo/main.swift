// garage-demo: a phone and a laptop, each with its own garage file, edit and delete notes, and
// their SyncEngines sync them over HTTP with a server on loopback (a SyncServer, with its own
// garage file: DemoServer.swift) through the ready HTTPSyncTransport; at the end, the devices and
// the server must hold the same notes.
import Foundation
import GarageLite
import GarageLiteClient
import GarageLitePostgres
#if canImport(Hummingbird) && !GARAGE_DEMO_IN_PROCESS
import ServiceLifecycle
#endif

/// A device: its own garage file, and the sync engine that syncs its notes with the server.
struct Device {
    let name: String
    let garage: Garage
    let engine: SyncEngine

    init(_ name: String, in folder: URL, transport: some SyncTransport) throws {
        self.name = name
        garage = try Garage(url: folder.appendingPathComponent("\(name).sqlite"))
        engine = SyncEngine(garage: garage, transport: transport, types: [.of(Note.self)])
    }

    func say(_ line: String) {
        print("   \(name.padding(toLength: 7, withPad: " ", startingAt: 0)) \(line)")
    }

    // The app's edits: synchronous calls, as from a button's action. The engine finds them by
    // their status (.notSynced).

    func add(_ id: String, title: String, items: [String]) throws {
        try garage.park(Note(id: id, title: title, items: items))
        say("adds \(id)\(title.isEmpty ? ", without a title" : " \"\(title)\""): \(list(items))")
    }

    func edit(_ id: String, _ what: String, _ change: (inout Note) -> Void) throws {
        guard var note = try garage.retrieve(Note.self, identifier: id) else { throw DemoFailure("\(name) has no \(id)") }
        change(&note)
        try garage.park(note)
        say(what)
    }

    func delete(_ id: String) throws {
        _ = try garage.delete(Note.self, identifier: id)   // a tombstone, for the engine to upload
        say("deletes \(id)")
    }

    /// Runs one sync (`engine.sync()`), and says what it did.
    @discardableResult
    func sync(_ comment: String = "") async throws -> SyncEngineReport {
        let report = try await engine.sync()
        let conflicts = report.conflicts
        let conflicted = Set(conflicts.map(\.object.identifier))
        let merged = conflicts.filter { $0.resolution == .merged }.map(\.object.identifier)
        let uploaded = report.synced
        var lines: [String] = []
        let plainUploads = uploaded.filter { !conflicted.contains($0) }
        if !plainUploads.isEmpty { lines.append("uploaded \(list(plainUploads))") }
        let deletions = report.uploads.flatMap(\.deletionsUploaded)
        if !deletions.isEmpty { lines.append("uploaded the deletion of \(list(deletions))") }
        for (key, reason) in report.refused.sorted(by: { $0.key.identifier < $1.key.identifier }) {
            lines.append("the server refused \(key.identifier): \"\(reason)\"")
        }
        // Its own uploads come back with the download too (with the server's version): not news.
        let downloaded = report.downloads.flatMap(\.applied).filter { !uploaded.contains($0) && !conflicted.contains($0) }
        if !downloaded.isEmpty { lines.append("downloaded \(list(unique(downloaded)))") }
        for conflict in conflicts {
            lines.append(describe(conflict))
        }
        let deleted = report.downloads.flatMap(\.deleted)
        if !deleted.isEmpty { lines.append("deleted \(list(deleted)), as the server did") }
        let mergesUploaded = merged.filter { uploaded.contains($0) }
        if !mergesUploaded.isEmpty { lines.append("uploaded the merge of \(list(mergesUploaded))") }
        for held in report.held.values.joined() { lines.append("held, after too many refusals: \(held)") }
        let text = lines.isEmpty ? "nothing to do" : lines.joined(separator: "; ")
        say("syncs\(comment): " + (text.count <= 80 ? text : lines.joined(separator: "\n" + String(repeating: " ", count: 17))))
        return report
    }

    /// How a conflict with the server's version was resolved.
    private func describe(_ conflict: DownloadConflict) -> String {
        let id = conflict.object.identifier
        switch conflict.resolution {
        case .merged where conflict.discardedFields.isEmpty:
            return "\(id) changed on the server too: merged, nothing discarded"
        case .merged:
            return "\(id) changed on the server too: merged; both changed \(list(conflict.discardedFields)): kept this edit (discardedFields)"
        case .tookDownloaded where conflict.wasDeletedLocally:
            return "\(id), deleted here, was edited on the server: the edit wins, \(id) is back"
        case .tookDownloaded:
            return "\(id): took the server's version"
        case .keptLocal where conflict.wasDeletedLocally:
            return "\(id): kept the local deletion"
        case .keptLocal:
            return "\(id): kept the local edit"
        }
    }

    /// The device's notes by identifier, without their sync statuses.
    func notes() throws -> [String: Note] {
        Dictionary(uniqueKeysWithValues: try garage.retrieveAll(Note.self).map { ($0.id, $0.content) })
    }
}

/// A step of the demo that could not run.
struct DemoFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// "a, b, c".
func list(_ texts: [String]) -> String { texts.joined(separator: ", ") }

/// `texts` without repeats, in their order.
func unique(_ texts: [String]) -> [String] {
    var seen: Set<String> = []
    return texts.filter { seen.insert($0).inserted }
}

/// Waits until `condition` holds, checking every 50 ms, for at most `seconds`: whether it held.
func eventually(within seconds: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(nanoseconds: 50_000_000)
    }
    return try await condition()
}

/// The differences between the notes of the server and those of the devices, one line each.
func differences(_ holders: [(name: String, notes: [String: Note])]) -> [String] {
    guard let reference = holders.first else { return [] }
    var lines: [String] = []
    for holder in holders.dropFirst() {
        for id in Set(reference.notes.keys).union(holder.notes.keys).sorted() where reference.notes[id] != holder.notes[id] {
            let describe = { (note: Note?) in note.map { "\"\($0.title)\": \(list($0.items))" } ?? "none" }
            lines.append("\(id): \(reference.name) \(describe(reference.notes[id])), \(holder.name) \(describe(holder.notes[id]))")
        }
    }
    return lines
}

/// The schema a PostgreSQL garage's URL names.
func schemaName(_ url: String) -> String {
    URLComponents(string: url)?.queryItems?.first { $0.name == "schema" }?.value ?? "garage"
}

/// The value after the flag `name` on the command line, or `nil`; exits with the usage when the
/// flag has none.
func option(_ name: String) -> String? {
    guard let index = CommandLine.arguments.firstIndex(of: name) else { return nil }
    guard index + 1 < CommandLine.arguments.count else {
        print("usage: garage-demo [--keep FOLDER] [--postgres URL]")
        exit(64)
    }
    return CommandLine.arguments[index + 1]
}

// `--keep FOLDER` writes the garage files there and keeps them, to look at them with the
// `garage` tool (the DocC article "The garage tool"); by default they go in a temporary folder,
// deleted at the end. `--postgres URL` keeps the server's notes in a PostgreSQL schema instead,
// served by two instances (a new schema `garage_demo_…` unless the URL names one).
let keptFolder = option("--keep").map { URL(fileURLWithPath: $0) }
let postgresURL = option("--postgres").map { url -> String in
    if url.contains("schema=") { return url }
    return url + (url.contains("?") ? "&" : "?") + "schema=garage_demo_\(UUID().uuidString.prefix(8).lowercased())"
}
let folder = keptFolder
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("garage-demo-\(UUID().uuidString.prefix(8))")
let files = ["server", "phone", "laptop"].map { folder.appendingPathComponent("\($0).sqlite") }
if let existing = files.first(where: { FileManager.default.fileExists(atPath: $0.path) }) {
    print("\(existing.path) exists already: keep the files of this run in another folder.")
    exit(64)
}

var converged = false
#if canImport(Hummingbird) && !GARAGE_DEMO_IN_PROCESS
var serverGroup: ServiceGroup?
var serverTask: Task<Void, any Error>?
#endif
do {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    // One instance on a file; on PostgreSQL, two instances, each its own garage on one schema.
    let servers = try postgresURL.map { url in try (0..<2).map { _ in try DemoServer(garage: try Garage(postgresURL: url)) } }
        ?? [try DemoServer(garage: try Garage(url: files[0]))]
    let server = servers[0]
    let storeName = postgresURL.map { "the PostgreSQL schema \(schemaName($0))" } ?? "server.sqlite"
    #if canImport(Hummingbird) && !GARAGE_DEMO_IN_PROCESS
    // The servers, in a task of their own: their ports are known once they listen.
    let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
    let apps = servers.map { $0.application { port in portContinuation.yield(port) } }
    let group = ServiceGroup(services: apps, logger: apps[0].logger)
    serverGroup = group
    serverTask = Task {
        defer { portContinuation.finish() }
        try await group.run()
    }
    var urls: [URL] = []
    for await port in ports where port > 0 {
        urls.append(URL(string: "http://127.0.0.1:\(port)")!)
        if urls.count == servers.count { break }
    }
    guard urls.count == servers.count else {
        let outcome = await serverTask?.result
        throw DemoFailure("the server did not start: \(String(describing: outcome))")
    }
    print("Serving on \(list(urls.map(\.absoluteString))) (\(servers.count == 1 ? "a SyncServer" : "two SyncServer instances") in Hummingbird; its notes in \(storeName))")
    // Each device asks its own instance first, and the other when that one can't be reached.
    let phoneTransport = HTTPSyncTransport(servers: urls) { DemoServer.token }
    let laptopTransport = HTTPSyncTransport(servers: urls.reversed()) { DemoServer.token }
    #else
    print("Hummingbird is built on Linux only (Package.swift): the devices call the server in this process.")
    let (phoneTransport, laptopTransport) = (InProcessTransport(server: server.sync), InProcessTransport(server: servers.last!.sync))
    #endif

    let phone = try Device("phone", in: folder, transport: phoneTransport)
    let laptop = try Device("laptop", in: folder, transport: laptopTransport)
    print("A phone and a laptop, each with its own garage file (in \(folder.path)\(keptFolder == nil ? ", deleted at the end" : "")),")
    print("sync notes with it: each has a SyncEngine" + (phoneTransport is HTTPSyncTransport
        ? " whose transport is the library's HTTPSyncTransport (JSON over URLSession, a bearer token)." : "."))
    print("Each engine.sync() uploads the device's changes, then downloads the server's after its cursor.")

    print("\n0. The phone kept a note from version 1 of the app, which called items \"lines\".")
    try phone.garage.park(NoteVersion1(id: "recipes", title: "Recipes", lines: ["flour", "sugar"]))
    let recipes = try phone.garage.retrieve(Note.self, identifier: "recipes")
    phone.say("version 2 reads recipes' items: \(list(recipes?.items ?? [])) (Note: LegacyKeyed)")

    print("\n1. Both create notes, then sync.")
    try phone.add("groceries", title: "Groceries", items: ["milk", "bread"])
    try phone.add("packing", title: "Packing", items: ["passport"])
    try laptop.add("books", title: "Books", items: ["Middlemarch"])
    try await phone.sync()
    try await laptop.sync(" (the server pages its changes, \(server.sync.pageSize) at a time)")
    try await phone.sync()
    let version = try phone.garage.metadata(Note.self, identifier: "groceries")?.serverVersion ?? "none"
    phone.say("engine.status: \(phone.engine.status); the engine keeps each note's server version (groceries: \(version))")

    print("\n2. Both edit \"groceries\" before syncing: the laptop its title, the phone its items.")
    try laptop.edit("groceries", "renames groceries \"Shopping\"") { $0.title = "Shopping" }
    try phone.edit("groceries", "adds \"eggs\" to groceries") { $0.items.append("eggs") }
    try await laptop.sync()
    try await phone.sync()
    try await laptop.sync()
    let groceries = try laptop.garage.retrieve(Note.self, identifier: "groceries")
    print("   The server answered the phone's upload with a conflict (its version is the laptop's); the phone's engine")
    print("   merged the three versions (the base both had, the phone's, the server's) property by property, and")
    print("   uploaded the merge. Both have: \"\(groceries?.title ?? "?")\": \(list(groceries?.items ?? []))")

    print("\n3. Both rename \"books\": the same property.")
    try phone.edit("books", "renames books \"Novels\"") { $0.title = "Novels" }
    try laptop.edit("books", "renames books \"Reading list\"") { $0.title = "Reading list" }
    try await phone.sync()
    let report = try await laptop.sync()
    try await phone.sync()
    let discarded = report.conflicts.flatMap(\.discardedFields)
    print("   The laptop's engine merged too, but both changed the title: the last writer (the laptop) wins, and")
    print("   the report's conflicts say what was lost (discardedFields: \(list(discarded))). Both have: \"\(try phone.notes()["books"]?.title ?? "?")\"")

    print("\n4. The laptop deletes \"packing\"; the deletion reaches the phone.")
    try laptop.delete("packing")
    try await laptop.sync()
    try await phone.sync()

    print("\n5. The laptop deletes \"recipes\" while the phone adds to it: the edit wins.")
    try laptop.delete("recipes")
    try phone.edit("recipes", "adds \"butter\" to recipes") { $0.items.append("butter") }
    try await phone.sync()
    try await laptop.sync()

    print("\n6. The server refuses a note without a title; once fixed, it syncs.")
    try phone.add("ideas", title: "", items: ["a garden"])
    try await phone.sync()
    let attempts = try phone.garage.metadata(Note.self, identifier: "ideas")?.attempts ?? 0
    phone.say("ideas stays .notSynced, with \(attempts) failed attempt (held after \(phone.garage.maximumUploadAttempts))")
    try phone.edit("ideas", "names it \"Ideas\"") { $0.title = "Ideas" }
    try await phone.sync()

    print("\n7. engine.run() syncs by itself: at once, then after each change (and every minute), until cancelled.")
    let lastSync = laptop.engine.status.lastSync
    let running = Task { await laptop.engine.run() }
    guard await eventually(within: 10, { laptop.engine.status.lastSync != lastSync }) else {
        throw DemoFailure("run() did not sync within 10 s: \(laptop.engine.status)")
    }
    let hasIdeas = try laptop.garage.retrieve(Note.self, identifier: "ideas") != nil
    laptop.say("runs its engine in a task: its first sync is done\(hasIdeas ? " (it has the phone's ideas now)" : "")")
    try laptop.add("trip", title: "Trip", items: ["tickets"])
    let start = Date()
    let arrived = try await eventually(within: 10) {
        let onServer = try await server.notes().contains { $0.id == "trip" }
        let status = try await laptop.garage.metadata(Note.self, identifier: "trip")?.syncStatus
        return onServer && status == .synced
    }
    let elapsed = Date().timeIntervalSince(start)
    running.cancel()
    await running.value
    guard arrived else { throw DemoFailure("run() did not upload trip within 10 s: \(laptop.engine.status)") }
    laptop.say("run() uploaded trip \(String(format: "%.1f", elapsed)) s after the park (once no change came for 1 s: debounce)")
    laptop.say("cancels run()'s task")
    try await phone.sync()

    print("\nA last sync on each, to be sure.")
    try await laptop.sync()
    try await phone.sync()

    let serverNotes = Dictionary(uniqueKeysWithValues: try await server.notes().map { ($0.id, $0.content) })
    let holders: [(name: String, notes: [String: Note])] = [("server", serverNotes), ("phone", try phone.notes()), ("laptop", try laptop.notes())]
    var problems = differences(holders)
    for device in [phone, laptop] {
        for (typeName, counts) in try device.garage.syncStatusCounts([.notSynced, .syncing]) {
            problems.append("\(device.name) has \(counts.values.reduce(0, +)) \(typeName) not uploaded yet")
        }
    }
    converged = problems.isEmpty
    if converged {
        print("\nThe phone, the laptop and the server hold the same \(serverNotes.count) notes.")
        for note in serverNotes.values.sorted(by: { $0.id < $1.id }) {
            print("   \(note.id): \"\(note.title)\": \(list(note.items))")
        }
    } else {
        print("\nThe phone, the laptop and the server differ:")
        for problem in problems { print("   \(problem)") }
    }
} catch {
    print("garage-demo failed: \(error)")
}
#if canImport(Hummingbird) && !GARAGE_DEMO_IN_PROCESS
// Stops the server gracefully: no new connection, and the open ones closed once idle.
await serverGroup?.triggerGracefulShutdown()
if case .failure(let error)? = await serverTask?.result {
    print("The server stopped with an error: \(error)")
    converged = false
}
#endif
if keptFolder == nil { try? FileManager.default.removeItem(at: folder) }
if let postgresURL {
    let schema = schemaName(postgresURL)
    print("The server's notes stay in the schema \(schema) (DROP SCHEMA \(schema) CASCADE removes them).")
}
exit(converged ? 0 : 1)
