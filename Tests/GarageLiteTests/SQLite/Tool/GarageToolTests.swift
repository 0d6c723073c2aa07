import Crypto
import Foundation
import GarageFixtureModels
import GarageLite
import Testing

// The types the tool's tests park; the tool itself knows only their names.

struct GTItem: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var name: String
    var count: Int
    var syncStatus: SyncStatus = .notSynced
}

struct GTChild: Codable, Identifiable, Sendable {
    var id: String
    var label: String
}

/// Holds an identifiable child: stored as a reference to it.
struct GTParent: Codable, Identifiable, Sendable {
    var id: String
    var title: String
    var child: GTChild
}

struct GTLegacy: Codable, Identifiable, Sendable {
    var id: String
    var value: Int
}

/// The `garage` command-line tool (Sources/garage), run as a process on stores the tests write
/// with the library: every command, the exit status of each kind of failure (the EXIT STATUS
/// table of `garage --help`), keys from the environment and from files, stores of older formats
/// and the progress line on a terminal.
@Suite("The garage command-line tool", .ownThreads, .firstPassOnly)
struct GarageToolTests {
    // MARK: - Helpers

    /// Runs `garage arguments…`.
    @discardableResult
    func garage(_ arguments: String..., stdin: String? = nil, environment: [String: String?] = [:],
                stderrOnTerminal: Bool = false) throws -> ToolProcess.Result {
        try ToolProcess.run(arguments, stdin: stdin, environment: environment, stderrOnTerminal: stderrOnTerminal)
    }

    /// The JSON the run printed on standard output.
    func json(_ result: ToolProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: result.stdoutData, options: [.fragmentsAllowed])
        } catch {
            Issue.record("not JSON: \(result)", sourceLocation: sourceLocation)
            throw error
        }
    }

    func jsonObject(_ result: ToolProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        try #require(try json(result, sourceLocation: sourceLocation) as? [String: Any], "\(result)",
                     sourceLocation: sourceLocation)
    }

    func jsonArray(_ result: ToolProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        try #require(try json(result, sourceLocation: sourceLocation) as? [[String: Any]], "\(result)",
                     sourceLocation: sourceLocation)
    }

    /// `list --json`'s lines as "Type(identifier)".
    func listedKeys(_ result: ToolProcess.Result, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        try jsonArray(result, sourceLocation: sourceLocation).map { "\($0["type"] as? String ?? "?")(\($0["identifier"] as? String ?? "?"))" }
    }

    /// The lines of `text`, without the empty last one.
    func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty }
    }

    static let itemA = GTItem(id: "a", name: "Alpha", count: 1, syncStatus: .notSynced)
    static let itemB = GTItem(id: "b", name: "Bravo", count: 2, syncStatus: .synced)
    static let itemC = GTItem(id: "c", name: "Charlie", count: 3, syncStatus: .undetermined)
    static let itemD = GTItem(id: "d", name: "Delta", count: 4, syncStatus: .synced)
    static let parent = GTParent(id: "p1", title: "The parent", child: GTChild(id: "c1", label: "first child"))

    /// A store of 3 `GTItem`s (one of each status but `.syncing`) and the tombstone of a fourth
    /// (deleted once `.synced`), a `GTParent` and its `GTChild` (only referenced): 5 objects,
    /// 1 tombstone, 3 types.
    func makeStore(in directory: TemporaryDirectory, name: String = "store.garage") throws -> String {
        let path = directory.path(name)
        let garage = try Garage(path: path)
        try garage.parkAll([Self.itemA, Self.itemB, Self.itemC, Self.itemD])
        try garage.delete(Self.itemD)
        try garage.park(Self.parent)
        return path
    }

    /// Deletes the row of `type(identifier)` behind the library's back.
    func deleteRow(_ path: String, type: String, identifier: String) throws {
        let changes = try SQLiteFile(path, busyTimeout: 10)
            .execute("DELETE FROM garage_object WHERE type = ? AND identifier = ?", [type, identifier])
        #expect(changes == 1)
    }

    func fileBytes(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    // MARK: - stats

    @Test func statsCountsObjectsPerTypeAndStatus() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)

        let text = try garage("stats", path)
        #expect(text.exitCode == 0, "\(text)")
        #expect(text.stderr.isEmpty, "\(text)")
        let output = lines(text.stdout)
        #expect(output.contains("Store:      \(path)"), "\(text)")
        #expect(output.contains("Format:     version \(Garage.formatVersion)"), "\(text)")
        #expect(output.contains("Encrypted:  no"), "\(text)")
        #expect(output.contains("Objects:    5 of 3 types"), "\(text)")
        // TYPE OBJECTS UNDETERMINED NOT-SYNCED SYNCING SYNCED CLAIMED HELD TOMBSTONES OLDEST-UNSYNCED
        let rows = output.map { $0.split(separator: " ").map(String.init) }
        let items = try #require(rows.first { $0.first == "GTItem" }, "\(text)")
        #expect(Array(items.dropFirst().prefix(8)) == ["3", "1", "1", "0", "1", "0", "0", "1"], "\(text)")
        #expect(items.count == 10 && items[9] != "-", "an item is not synced: \(text)")
        let parents = try #require(rows.first { $0.first == "GTParent" }, "\(text)")
        #expect(Array(parents.dropFirst()) == ["1", "1", "0", "0", "0", "0", "0", "0", "-"], "\(text)")
        #expect(rows.contains { $0.first == "GTChild" }, "\(text)")

        let result = try garage("stats", path, "--json")
        #expect(result.exitCode == 0, "\(result)")
        let stats = try jsonObject(result)
        #expect(stats["formatVersion"] as? Int == Garage.formatVersion)
        #expect(stats["isEncrypted"] as? Bool == false)
        #expect(stats["objects"] as? Int == 5)
        #expect(stats["path"] as? String == path)
        #expect((stats["fileBytes"] as? Int ?? 0) > 0)
        let types = try #require(stats["types"] as? [[String: Any]], "\(result)")
        #expect(types.compactMap { $0["type"] as? String } == ["GTChild", "GTItem", "GTParent"])
        let item = try #require(types.first { $0["type"] as? String == "GTItem" })
        #expect(item["objects"] as? Int == 3)
        #expect(item["tombstones"] as? Int == 1)
        #expect(item["byStatus"] as? [String: Int] == ["undetermined": 1, "notSynced": 1, "syncing": 0, "synced": 1])
        #expect(item["openClaims"] as? Int == 0 && item["held"] as? Int == 0)
        #expect(item["oldestUnsyncedChange"] is String)
        let child = try #require(types.first { $0["type"] as? String == "GTChild" })
        #expect(child["objects"] as? Int == 1 && child["tombstones"] as? Int == 0)
        #expect(child["byStatus"] as? [String: Int] == ["undetermined": 1, "notSynced": 0, "syncing": 0, "synced": 0])
    }

    // MARK: - list

    @Test func listFiltersByTypeStatusAndLimit() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)

        let all = try garage("list", path, "--json")
        #expect(all.exitCode == 0, "\(all)")
        #expect(try listedKeys(all) == ["GTChild(c1)", "GTItem(a)", "GTItem(b)", "GTItem(c)", "GTParent(p1)"])
        let first = try #require(try jsonArray(all).first)
        #expect(first["status"] as? String == "undetermined")
        #expect(first["revision"] as? Int == 1)
        #expect(first["isDeleted"] as? Bool == false)
        #expect(first["modificationDate"] is String)
        #expect((first["bytes"] as? Int ?? 0) > 0)

        let items = try garage("list", path, "--type", "GTItem", "--json")
        #expect(items.exitCode == 0, "\(items)")
        #expect(try listedKeys(items) == ["GTItem(a)", "GTItem(b)", "GTItem(c)"])
        #expect(try jsonArray(items).map { $0["status"] as? String } == ["notSynced", "synced", "undetermined"])

        let notSynced = try garage("list", path, "--status", "notSynced", "--json")
        #expect(notSynced.exitCode == 0, "\(notSynced)")
        #expect(try listedKeys(notSynced) == ["GTItem(a)"])
        // Other spellings of a status.
        #expect(try listedKeys(try garage("list", path, "-s", "not-synced", "--json")) == ["GTItem(a)"])
        #expect(try listedKeys(try garage("list", path, "--status", "synced", "--json")) == ["GTItem(b)"])

        let limited = try garage("list", path, "--limit", "2", "--json")
        #expect(limited.exitCode == 0, "\(limited)")
        #expect(try listedKeys(limited) == ["GTChild(c1)", "GTItem(a)"])

        let deleted = try garage("list", path, "--type", "GTItem", "--deleted", "--json")
        #expect(deleted.exitCode == 0, "\(deleted)")
        #expect(try listedKeys(deleted) == ["GTItem(a)", "GTItem(b)", "GTItem(c)", "GTItem(d)"])
        #expect(try jsonArray(deleted).map { $0["isDeleted"] as? Bool } == [false, false, false, true])

        // As text: one line per object under a header, the tombstone only with --deleted.
        let text = try garage("list", path, "--type", "GTItem")
        #expect(text.exitCode == 0, "\(text)")
        let textLines = lines(text.stdout)
        #expect(textLines.count == 4, "\(text)")
        #expect(textLines.first?.hasPrefix("TYPE") == true, "\(text)")
        #expect(textLines.dropFirst().map { $0.split(separator: " ").prefix(3).joined(separator: " ") }
                == ["GTItem a notSynced", "GTItem b synced", "GTItem c undetermined"], "\(text)")
        let textDeleted = try garage("list", path, "--type", "GTItem", "--deleted")
        #expect(lines(textDeleted.stdout).count == 5, "\(textDeleted)")
        #expect(lines(textDeleted.stdout).last?.contains("deleted (") == true, "\(textDeleted)")

        // A type with nothing: an empty list.
        let none = try garage("list", path, "--type", "GTNothing", "--json")
        #expect(none.exitCode == 0, "\(none)")
        #expect(try jsonArray(none).isEmpty, "\(none)")
    }

    /// `garage list … | head`: when the reader goes away, the tool ends quietly, with the status
    /// a shell gives a process that SIGPIPE stopped, not a crash report.
    @Test func listEndsQuietlyWhenItsReaderGoesAway() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("many.garage")
        try Garage(path: path).parkAll((0..<3_000).map { GTItem(id: String(format: "item-%05d", $0), name: "item \($0)", count: $0) })
        let tool = try ToolProcess.garage().path
        let result = try ToolProcess.run(executable: URL(fileURLWithPath: "/bin/bash"),
                                         ["-c", "set -o pipefail; '\(tool)' list '\(path)' | head -n 1"])
        #expect(result.exitCode == 141, "\(result)")
        #expect(result.stdout.hasPrefix("TYPE"), "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
    }

    @Test func listRefusesAnUnknownStatusOrLimitAsAUsageError() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)
        let unknown = try garage("list", path, "--status", "pending")
        #expect(unknown.exitCode == 64, "\(unknown)")
        #expect(unknown.stderr.contains("unknown status 'pending'"), "\(unknown)")
        #expect(unknown.stdout.isEmpty, "\(unknown)")
        let zero = try garage("list", path, "--limit", "0")
        #expect(zero.exitCode == 64, "\(zero)")
        let unknownCommand = try garage("frobnicate", path)
        #expect(unknownCommand.exitCode == 64, "\(unknownCommand)")
        let noStore = try garage("list")
        #expect(noStore.exitCode == 64, "\(noStore)")
    }

    // MARK: - show

    @Test func showPrintsMetadataAndPrettyJSON() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)

        let text = try garage("show", path, "GTParent", "p1")
        #expect(text.exitCode == 0, "\(text)")
        let output = lines(text.stdout)
        #expect(output.first == "GTParent(p1)", "\(text)")
        #expect(output.contains("  status:    undetermined"), "\(text)")
        #expect(output.contains("  revision:  1"), "\(text)")
        #expect(output.contains("  root:      yes (parked directly)"), "\(text)")
        #expect(output.contains("  references:"), "\(text)")
        #expect(output.contains("    GTChild(c1)"), "\(text)")
        // The object's JSON, pretty-printed with sorted keys: the child is its identifier.
        #expect(text.stdout.contains("""
            {
              "child" : "c1",
              "id" : "p1",
              "title" : "The parent"
            }
            """), "\(text)")
        #expect(!text.stdout.contains("first child"), "\(text)")

        let child = try garage("show", path, "GTChild", "c1")
        #expect(child.exitCode == 0, "\(child)")
        #expect(lines(child.stdout).contains("  root:      no (parked only as a reference)"), "\(child)")
        #expect(lines(child.stdout).contains("  references: none"), "\(child)")

        let shown = try garage("show", path, "GTParent", "p1", "--json")
        #expect(shown.exitCode == 0, "\(shown)")
        let object = try jsonObject(shown)
        #expect(object["type"] as? String == "GTParent" && object["identifier"] as? String == "p1")
        #expect(object["status"] as? String == "undetermined")
        #expect(object["revision"] as? Int == 1)
        #expect(object["isRoot"] as? Bool == true && object["isDeleted"] as? Bool == false)
        #expect(object["attempts"] as? Int == 0)
        #expect(object["creationDate"] is String && object["modificationDate"] is String)
        let references = try #require(object["references"] as? [[String: Any]])
        #expect(references.count == 1)
        #expect(references.first?["type"] as? String == "GTChild" && references.first?["identifier"] as? String == "c1")
        #expect(references.first?["exists"] as? Bool == true)
        let json = try #require(object["object"] as? [String: Any])
        #expect(json["child"] as? String == "c1" && json["title"] as? String == "The parent")

        // A tombstone: its metadata, no JSON.
        let tombstone = try garage("show", path, "GTItem", "d")
        #expect(tombstone.exitCode == 0, "\(tombstone)")
        #expect(lines(tombstone.stdout).first == "GTItem(d) (deleted: a tombstone)", "\(tombstone)")
        #expect(!tombstone.stdout.contains("Delta"), "\(tombstone)")
        let tombstoneJSON = try jsonObject(try garage("show", path, "GTItem", "d", "--json"))
        #expect(tombstoneJSON["isDeleted"] as? Bool == true && tombstoneJSON["object"] == nil)
    }

    @Test func showResolveInlinesTheReferencedChild() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)

        let text = try garage("show", path, "GTParent", "p1", "--resolve")
        #expect(text.exitCode == 0, "\(text)")
        #expect(text.stdout.contains(#""label" : "first child""#), "\(text)")
        #expect(!text.stdout.contains(#""child" : "c1""#), "\(text)")

        let shown = try garage("show", path, "GTParent", "p1", "--resolve", "--json")
        #expect(shown.exitCode == 0, "\(shown)")
        let object = try #require(try jsonObject(shown)["object"] as? [String: Any], "\(shown)")
        let child = try #require(object["child"] as? [String: Any], "the child is not inlined: \(shown)")
        #expect(child["id"] as? String == "c1" && child["label"] as? String == "first child")
        #expect(object["title"] as? String == "The parent")
    }

    @Test func showOfAMissingObjectExits9() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)
        let missing = try garage("show", path, "GTParent", "nobody")
        #expect(missing.exitCode == 9, "\(missing)")
        #expect(missing.stderr.contains("GTParent(nobody)"), "\(missing)")
        #expect(missing.stdout.isEmpty, "\(missing)")
        let unknownType = try garage("show", path, "GTNothing", "p1", "--json")
        #expect(unknownType.exitCode == 9, "\(unknownType)")
        // A reference to a missing object is shown as missing.
        try deleteRow(path, type: "GTChild", identifier: "c1")
        let dangling = try garage("show", path, "GTParent", "p1")
        #expect(dangling.exitCode == 0, "\(dangling)")
        #expect(lines(dangling.stdout).contains("    GTChild(c1)  (missing)"), "\(dangling)")
        let danglingJSON = try jsonObject(try garage("show", path, "GTParent", "p1", "--json", "--resolve"))
        #expect((danglingJSON["references"] as? [[String: Any]])?.first?["exists"] as? Bool == false)
        #expect((danglingJSON["object"] as? [String: Any])?["child"] as? String == "c1")
    }

    // MARK: - check

    @Test func checkExits0OnASoundStoreAnd1WithTheProblemListed() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)

        let sound = try garage("check", path)
        #expect(sound.exitCode == 0, "\(sound)")
        #expect(sound.stdout.hasPrefix("The store is sound"), "\(sound)")
        let soundJSON = try jsonObject(try garage("check", path, "--json"))
        #expect(soundJSON["isOK"] as? Bool == true)
        #expect((soundJSON["problems"] as? [String])?.isEmpty == true)

        try deleteRow(path, type: "GTChild", identifier: "c1")
        let damaged = try garage("check", path)
        #expect(damaged.exitCode == 1, "\(damaged)")
        #expect(damaged.stdout.hasPrefix("The store has 1 problem:"), "\(damaged)")
        #expect(damaged.stdout.contains("- GTParent(p1) references GTChild(c1), which is not parked"), "\(damaged)")

        let json = try garage("check", path, "--json")
        #expect(json.exitCode == 1, "\(json)")
        let report = try jsonObject(json)
        #expect(report["isOK"] as? Bool == false && report["isTruncated"] as? Bool == false)
        let problems = try #require(report["problems"] as? [String])
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("GTParent(p1) references GTChild(c1)") == true, "\(problems)")
    }

    // MARK: - gc

    @Test func gcListsUnreachableObjectsAndDeletesThemOnlyWithApply() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("gc.garage")
        do {
            let garage = try Garage(path: path)
            try garage.park(GTParent(id: "p1", title: "first", child: GTChild(id: "c1", label: "left behind")))
            try garage.park(GTParent(id: "p1", title: "second", child: GTChild(id: "c2", label: "kept")))
            try garage.park(GTItem(id: "root", name: "", count: 0))
        }
        let orphan = ObjectKey(typeName: "GTChild", identifier: "c1")
        let kept = ObjectKey(typeName: "GTChild", identifier: "c2")

        let dryRun = try garage("gc", path)
        #expect(dryRun.exitCode == 0, "\(dryRun)")
        #expect(dryRun.stdout.hasPrefix("Dry run: 1 unreachable object would be deleted: GTChild(c1)."), "\(dryRun)")
        let dryJSON = try jsonObject(try garage("gc", path, "--json"))
        #expect(dryJSON["isDryRun"] as? Bool == true)
        #expect(dryJSON["objects"] as? [[String]] == [["GTChild", "c1"]])
        do {
            let garage = try Garage(path: path)
            #expect(try garage.record(orphan) != nil, "the dry run deleted it")
            #expect(try garage.count() == 4)
        }

        let applied = try garage("gc", path, "--apply")
        #expect(applied.exitCode == 0, "\(applied)")
        #expect(applied.stdout.hasPrefix("Deleted 1 unreachable object: GTChild(c1)."), "\(applied)")
        do {
            let garage = try Garage(path: path)
            #expect(try garage.record(orphan) == nil)
            #expect(try garage.record(kept) != nil)
            #expect(try garage.retrieve(GTParent.self, identifier: "p1")?.child.label == "kept")
            #expect(try garage.count() == 3)
        }
        let again = try garage("gc", path, "--apply", "--json")
        #expect(again.exitCode == 0, "\(again)")
        let againJSON = try jsonObject(again)
        #expect(againJSON["isDryRun"] as? Bool == false && (againJSON["objects"] as? [Any])?.isEmpty == true)
    }

    // MARK: - export and import

    @Test func exportThenImportCopiesTheStoreExactly() throws {
        let directory = try TemporaryDirectory()
        let source = try makeStore(in: directory, name: "source.garage")
        do {
            // An edited object (revision 2), and one that failed to upload (attempts, retry date).
            let garage = try Garage(path: source)
            try garage.park(GTItem(id: "a", name: "Alpha, edited", count: 10))
            let claim = try garage.claim(GTItem.self, limit: 10)
            #expect(claim.objects.map(\.id) == ["a"])
            try garage.release(claim, retryAfter: 3_600, error: CocoaError(.fileNoSuchFile))
        }
        let exported = try garage("export", source)
        #expect(exported.exitCode == 0, "\(exported)")
        #expect(exported.stderr.isEmpty, "\(exported)")
        let exportLines = lines(exported.stdout)
        #expect(exportLines.count == 6, "5 objects and a tombstone: \(exported)")
        // Each line is a JSON object with the documented fields.
        let decoded: [[String: Any]] = try exportLines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        #expect(decoded.map { "\($0["type"] as? String ?? "")(\($0["identifier"] as? String ?? ""))" }
                == ["GTChild(c1)", "GTItem(a)", "GTItem(b)", "GTItem(c)", "GTItem(d)", "GTParent(p1)"])
        #expect(decoded[1]["revision"] as? Int == 2)
        #expect(decoded[1]["attempts"] as? Int == 1 && decoded[1]["retryDate"] is Double && decoded[1]["lastError"] is String,
                "\(exportLines[1])")
        // A tombstone keeps the content it deleted (issue 24).
        #expect(decoded[4]["isDeleted"] as? Bool == true && (decoded[4]["data"] as? String)?.isEmpty == false)
        #expect(decoded[5]["references"] as? [[String]] == [["GTChild", "c1"]])
        #expect(decoded[0]["isRoot"] as? Bool == false && decoded[5]["isRoot"] as? Bool == true)
        let data = try #require(decoded[3]["data"] as? String)
        let item = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
        #expect(item?["name"] as? String == "Charlie")
        for object in decoded {
            #expect(object["creationDate"] is Double && object["modificationDate"] is Double && object["status"] is String)
        }

        let file = directory.path("objects.jsonl")
        try exported.stdoutData.write(to: URL(fileURLWithPath: file))
        let target = directory.path("target.garage")
        #expect(!FileManager.default.fileExists(atPath: target))
        let imported = try garage("import", target, stdin: file)
        #expect(imported.exitCode == 0, "\(imported)")
        #expect(imported.stdout == "Imported 6 objects (GTChild: 1, GTItem: 4, GTParent: 1).\n", "\(imported)")

        let reexported = try garage("export", target)
        #expect(reexported.exitCode == 0, "\(reexported)")
        #expect(reexported.stdoutData == exported.stdoutData,
                "the copy's export differs:\n\(exported.stdout)\n---\n\(reexported.stdout)")
        // The copy reads back through the library with the app's types.
        do {
            let garage = try Garage(path: target)
            #expect(try garage.retrieve(GTParent.self, identifier: "p1")?.child.label == "first child")
            #expect(try garage.retrieve(GTItem.self, identifier: "a")?.name == "Alpha, edited")
            #expect(try garage.retrieve(GTItem.self, identifier: "d") == nil)
            #expect(try garage.check().isOK)
        }

        // Importing again leaves everything as it is.
        let again = try garage("import", target, stdin: file)
        #expect(again.exitCode == 0, "\(again)")
        #expect(again.stdout == "Imported 0 objects; 6 already in the garage, left as they were (GTChild: 1, GTItem: 4, GTParent: 1).\n",
                "\(again)")
        let againJSON = try jsonObject(try garage("import", target, "--json", stdin: file))
        #expect((againJSON["imported"] as? [String: Int])?.isEmpty == true)
        #expect(againJSON["alreadyInStore"] as? [String: Int] == ["GTChild": 1, "GTItem": 4, "GTParent": 1])
        #expect(try garage("export", target).stdoutData == exported.stdoutData)

        // --type exports one type.
        let onlyItems = try garage("export", source, "--type", "GTItem")
        #expect(onlyItems.exitCode == 0 && lines(onlyItems.stdout) == Array(exportLines[1...4]), "\(onlyItems)")
    }

    @Test func importTakesHandWrittenLinesWithDefaults() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("hand.jsonl")
        try Data("""
            {"type": "GTItem", "identifier": "h1", "data": "{\\"id\\":\\"h1\\",\\"name\\":\\"Hand\\",\\"count\\":7}"}

            {"type": "GTItem", "identifier": "h2", "data": "{\\"id\\":\\"h2\\",\\"name\\":\\"Made\\",\\"count\\":8}", "status": "synced"}
            """.utf8).write(to: URL(fileURLWithPath: file))
        let target = directory.path("hand.garage")
        let imported = try garage("import", target, "--json", stdin: file)
        #expect(imported.exitCode == 0, "\(imported)")
        #expect(try jsonObject(imported)["imported"] as? [String: Int] == ["GTItem": 2])
        let garage = try Garage(path: target)
        #expect(try garage.retrieve(GTItem.self, identifier: "h1")?.count == 7)
        #expect(try garage.syncStatus(for: GTItem(id: "h2", name: "Made", count: 8)) == .synced)
    }

    @Test(arguments: [
        ("a line without an identifier", #"{"type": "GTItem", "data": "{\"id\":\"x\",\"name\":\"X\",\"count\":0}"}"#, "identifier"),
        ("a line whose data is not JSON", #"{"type": "GTItem", "identifier": "x", "data": "{not json"}"#, "JSON"),
        ("a line that is not JSON", #"{"type": "GTItem", "#, "JSON"),
        ("a line with an unknown status", #"{"type": "GTItem", "identifier": "x", "data": "{}", "status": "lost"}"#, "status"),
        ("a line whose identifier is not a string", #"{"type": "GTItem", "identifier": 5, "data": "{}"}"#, "\"identifier\""),
        ("a line that is not an object", "[1, 2]", "line 3"),
        ("a line whose data is not an object", #"{"type": "GTItem", "identifier": "x", "data": "[1]"}"#, "not an object"),
        ("a line with an empty identifier", #"{"type": "GTItem", "identifier": "", "data": "{}"}"#, "empty"),
        ("a line with revision 0", #"{"type": "GTItem", "identifier": "x", "data": "{}", "revision": 0}"#, "revision"),
        ("a tombstone with invalid data", #"{"type": "GTItem", "identifier": "x", "data": "{", "isDeleted": true}"#, "JSON"),
        ("a reference that is not a pair", #"{"type": "GTItem", "identifier": "x", "data": "{}", "references": [["GTChild"]]}"#, "pair"),
        ("an object already on line 1", #"{"type": "GTChild", "identifier": "c1", "data": "{}"}"#, "GTChild(c1) is on line 1 already"),
    ])
    func importRefusesABadLineNamingItAndWritesNothing(what: String, badLine: String, reason: String) throws {
        let directory = try TemporaryDirectory()
        let source = try makeStore(in: directory, name: "source.garage")
        let exported = try garage("export", source)
        try #require(exported.exitCode == 0, "\(exported)")
        var input = lines(exported.stdout)
        input.insert(badLine, at: 2)
        let file = directory.path("bad.jsonl")
        try Data((input.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))

        // The target holds an object already.
        let target = directory.path("target.garage")
        do {
            let garage = try Garage(path: target)
            try garage.park(GTItem(id: "already", name: "there", count: 0))
        }
        let before = try garage("export", target)
        try #require(before.exitCode == 0 && lines(before.stdout).count == 1, "\(before)")

        let refused = try garage("import", target, stdin: file)
        #expect(refused.exitCode == 8, "\(what): \(refused)")
        #expect(refused.stderr.contains("line 3"), "\(what): \(refused)")
        #expect(refused.stderr.contains(reason), "\(what): \(refused)")
        #expect(refused.stdout.isEmpty, "\(what): \(refused)")
        let after = try garage("export", target)
        #expect(after.stdoutData == before.stdoutData, "\(what): the target changed: \(after)")

        // Into a store that doesn't exist yet, a refused import leaves no file.
        let fresh = directory.path("fresh.garage")
        let refusedFresh = try garage("import", fresh, stdin: file)
        #expect(refusedFresh.exitCode == 8, "\(what): \(refusedFresh)")
        for suffix in ["", "-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: fresh + suffix), "\(what): a refused import left \(fresh + suffix)")
        }
    }

    // MARK: - rename-type

    @Test func renameTypeMovesTheObjects() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("rename.garage")
        do {
            let garage = try Garage(path: path)
            try garage.parkAll([GTLegacy(id: "l1", value: 1), GTLegacy(id: "l2", value: 2)])
            try garage.park(GTItem(id: "other", name: "", count: 0))
        }
        let moved = try garage("rename-type", path, "GTLegacy", "GTRenamed")
        #expect(moved.exitCode == 0, "\(moved)")
        #expect(moved.stdout == "Moved 2 objects from GTLegacy to GTRenamed.\n", "\(moved)")
        let listed = try garage("list", path, "--json")
        #expect(try listedKeys(listed) == ["GTItem(other)", "GTRenamed(l1)", "GTRenamed(l2)"], "\(listed)")
        let again = try garage("rename-type", path, "GTLegacy", "GTRenamed", "--json")
        #expect(again.exitCode == 0, "\(again)")
        #expect(try jsonObject(again)["moved"] as? Int == 0)
        // The library reads them under the new name.
        let garage = try Garage(path: path)
        #expect(try garage.record(ObjectKey(typeName: "GTRenamed", identifier: "l2"))?.json.contains("\"value\":2") == true)
        #expect(try garage.retrieve(GTLegacy.self, identifier: "l1") == nil)
    }

    // MARK: - import-garagestorage

    @Test func importGarageStorageImportsTheFixture() throws {
        let folder = FixtureFile.fixturesFolder.appendingPathComponent("garagestorage")
        let names = ["store.garagestorage", "store.garagestorage-wal"]
        let originals = try names.map { try Data(contentsOf: folder.appendingPathComponent($0)) }
        let sourceDirectory = try TemporaryDirectory()
        for (name, bytes) in zip(names, originals) {
            try bytes.write(to: sourceDirectory.url.appendingPathComponent(name))
        }
        let source = sourceDirectory.path("store.garagestorage")
        let directory = try TemporaryDirectory()
        let target = directory.path("imported.garage")

        let imported = try garage("import-garagestorage", source, target, "--json")
        #expect(imported.exitCode == 0, "\(imported)")
        let report = try jsonObject(imported)
        #expect(report["imported"] as? [String: Int] == ["Relative": 4, "Diary": 1, "Badge": 1])
        #expect(report["encrypted"] as? Int == 1)
        #expect((report["alreadyInStore"] as? [String: Int])?.isEmpty == true)
        #expect((report["alreadyImported"] as? [String: Int])?.isEmpty == true)
        let failures = try #require(report["failures"] as? [String])
        #expect(failures.count == 3)
        #expect(failures.first?.hasPrefix("row 6 (Relative(Ghost))") == true, "\(failures)")

        let relatives = try garage("list", target, "--type", "Relative", "--json")
        #expect(relatives.exitCode == 0, "\(relatives)")
        #expect(try listedKeys(relatives) == ["Relative(Emily)", "Relative(Nick)", "Relative(Olivia)", "Relative(Sam)"])
        let sam = try garage("show", target, "Relative", "Sam", "--resolve", "--json")
        #expect(sam.exitCode == 0, "\(sam)")
        let object = try #require(try jsonObject(sam)["object"] as? [String: Any])
        #expect((object["brother"] as? [String: Any])?["name"] as? String == "Nick", "\(sam)")

        // Again: everything is there already. The source never changes.
        let again = try garage("import-garagestorage", source, target)
        #expect(again.exitCode == 0, "\(again)")
        #expect(again.stdout.hasPrefix("Imported 0 objects; 6 imported before, skipped"), "\(again)")
        for (name, bytes) in zip(names, originals) {
            #expect(try Data(contentsOf: sourceDirectory.url.appendingPathComponent(name)) == bytes, "\(name) changed")
            #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == bytes, "the golden \(name) changed")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sourceDirectory.url.path).sorted() == names)

        let missing = try garage("import-garagestorage", sourceDirectory.path("nothing.garagestorage"), target)
        #expect(missing.exitCode == 3, "\(missing)")
        let notGarageStorage = try garage("import-garagestorage", target, directory.path("other.garage"))
        #expect(notGarageStorage.exitCode == 4, "\(notGarageStorage)")
    }

    // MARK: - rekey and keys

    @Test func rekeyEncryptsRotatesAndDecrypts() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)
        let first = "first passphrase of the tool tests"
        let second = "base64:" + Data((0..<32).map { UInt8($0 * 7 % 256) }).base64EncodedString()
        let wrong = "not the passphrase"

        // Encrypting a plain store.
        let noNewKey = try garage("rekey", path)
        #expect(noNewKey.exitCode == 6, "\(noNewKey)")
        let encrypted = try garage("rekey", path, environment: ["GARAGE_NEW_KEY": first])
        #expect(encrypted.exitCode == 0, "\(encrypted)")
        #expect(encrypted.stdout == "Encrypted 5 objects.\n", "\(encrypted)")

        let withoutKey = try garage("stats", path)
        #expect(withoutKey.exitCode == 6, "\(withoutKey)")
        #expect(withoutKey.stdout.isEmpty, "\(withoutKey)")
        #expect(try garage("list", path).exitCode == 6)
        let wrongKey = try garage("export", path, environment: ["GARAGE_KEY": wrong])
        #expect(wrongKey.exitCode == 6, "\(wrongKey)")
        #expect(wrongKey.stdout.isEmpty, "\(wrongKey)")
        let withKey = try garage("stats", path, "--json", environment: ["GARAGE_KEY": first])
        #expect(withKey.exitCode == 0, "\(withKey)")
        #expect(try jsonObject(withKey)["isEncrypted"] as? Bool == true)
        let shown = try garage("show", path, "GTItem", "a", "--json", environment: ["GARAGE_KEY": first])
        #expect((try jsonObject(shown)["object"] as? [String: Any])?["name"] as? String == "Alpha", "\(shown)")
        #expect(try garage("check", path, environment: ["GARAGE_KEY": first]).exitCode == 0)
        // The rows hold no plaintext.
        let rows = try SQLiteFile(path).strings("SELECT CAST(data AS TEXT) FROM garage_object")
        #expect(rows.count == 6)
        #expect(!rows.contains { $0.contains("Alpha") || $0.contains("first child") }, "\(rows)")

        // Rotating: the current key from the environment, the new one from a file.
        let newKeyFile = directory.path("new.key")
        try Data((second + "\n").utf8).write(to: URL(fileURLWithPath: newKeyFile))
        let rotated = try garage("rekey", path, "--new-key-file", newKeyFile, environment: ["GARAGE_KEY": first])
        #expect(rotated.exitCode == 0, "\(rotated)")
        #expect(rotated.stdout.hasPrefix("Re-encrypted"), "\(rotated)")
        #expect(try garage("stats", path, environment: ["GARAGE_KEY": first]).exitCode == 6)
        #expect(try garage("stats", path, "--key-file", newKeyFile).exitCode == 0)
        let items = try garage("list", path, "--type", "GTItem", "--json", environment: ["GARAGE_KEY": second])
        #expect(items.exitCode == 0, "\(items)")
        #expect(try listedKeys(items) == ["GTItem(a)", "GTItem(b)", "GTItem(c)"])
        // Rotating again, both keys from the environment.
        let third = "third passphrase of the tool tests"
        let rotatedAgain = try garage("rekey", path, "--json", environment: ["GARAGE_KEY": second, "GARAGE_NEW_KEY": third])
        #expect(rotatedAgain.exitCode == 0, "\(rotatedAgain)")
        #expect(try jsonObject(rotatedAgain)["objects"] as? Int == 6)   // and the content a tombstone keeps
        #expect(try garage("stats", path, "--key-file", newKeyFile).exitCode == 6)
        // An export with the key holds the objects' JSON, decrypted.
        let exported = try garage("export", path, environment: ["GARAGE_KEY": third])
        #expect(exported.exitCode == 0, "\(exported)")
        #expect(lines(exported.stdout).count == 6)
        #expect(exported.stdout.contains(#"\"name\":\"Alpha\""#), "\(exported)")
        // Rotating back to the key in the file.
        let rotatedBack = try garage("rekey", path, "--new-key-file", newKeyFile, environment: ["GARAGE_KEY": third])
        #expect(rotatedBack.exitCode == 0, "\(rotatedBack)")
        // A key file that can't be read, an empty key, a malformed base64 key.
        #expect(try garage("stats", path, "--key-file", directory.path("no.key")).exitCode == 6)
        #expect(try garage("stats", path, environment: ["GARAGE_KEY": ""]).exitCode == 6)
        #expect(try garage("stats", path, environment: ["GARAGE_KEY": "base64:AAAA"]).exitCode == 6)
        // The file wins over the environment.
        #expect(try garage("stats", path, "--key-file", newKeyFile, environment: ["GARAGE_KEY": wrong]).exitCode == 0)

        // Decrypting.
        let both = try garage("rekey", path, "--decrypt", environment: ["GARAGE_KEY": second, "GARAGE_NEW_KEY": first])
        #expect(both.exitCode == 64, "\(both)")
        let decryptWithoutKey = try garage("rekey", path, "--decrypt")
        #expect(decryptWithoutKey.exitCode == 6, "\(decryptWithoutKey)")
        let decryptWrongKey = try garage("rekey", path, "--decrypt", environment: ["GARAGE_KEY": wrong])
        #expect(decryptWrongKey.exitCode == 6, "\(decryptWrongKey)")
        let decrypted = try garage("rekey", path, "--decrypt", "--key-file", newKeyFile)
        #expect(decrypted.exitCode == 0, "\(decrypted)")
        #expect(decrypted.stdout.hasPrefix("Decrypted"), "\(decrypted)")
        let plain = try garage("stats", path, "--json")
        #expect(plain.exitCode == 0, "\(plain)")
        #expect(try jsonObject(plain)["isEncrypted"] as? Bool == false)
        let garage = try Garage(path: path)
        #expect(try garage.retrieve(GTParent.self, identifier: "p1")?.child.label == "first child")
        #expect(try garage.retrieve(GTItem.self, identifier: "b")?.name == "Bravo")
    }

    @Test func theLockedFixtureOpensWithItsPassphraseOnly() throws {
        let fixture = try FixtureFile("locked.garage", version: 4)
        let locked = try garage("stats", fixture.path, "--json", environment: ["GARAGE_KEY": FixtureV4.passphrase])
        #expect(locked.exitCode == 0, "\(locked)")
        let stats = try jsonObject(locked)
        #expect(stats["isEncrypted"] as? Bool == true && stats["objects"] as? Int == 4)
        #expect(try garage("stats", fixture.path).exitCode == 6)
        #expect(try garage("list", fixture.path, environment: ["GARAGE_KEY": FixtureV4.firstPassphrase]).exitCode == 6)
        #expect(try fixture.bytes() == fixture.originalBytes)
        #expect(try Data(contentsOf: fixture.original) == fixture.originalBytes, "the golden file changed")
    }

    // MARK: - Exit statuses

    @Test func aMissingFileExits3() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("nothing.garage")
        for command in ["stats", "list", "check", "export", "gc", "rename-type"] {
            let arguments = command == "rename-type" ? [command, path, "A", "B"] : [command, path]
            let result = try ToolProcess.run(arguments)
            #expect(result.exitCode == 3, "\(result)")
            #expect(result.stderr.contains("no store at \(path)"), "\(result)")
        }
        #expect(try garage("show", path, "GTItem", "a").exitCode == 3)
        #expect(try garage("rekey", path, environment: ["GARAGE_NEW_KEY": "k"]).exitCode == 3)
        // Nothing was created.
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aFileThatIsNotAStoreExits4() throws {
        let directory = try TemporaryDirectory()
        let text = directory.path("notes.txt")
        let bytes = Data(String(repeating: "This is not an SQLite database, only text.\n", count: 100).utf8)
        try bytes.write(to: URL(fileURLWithPath: text))
        for arguments in [["stats", text], ["list", text], ["check", text], ["export", text], ["gc", text, "--apply"]] {
            let result = try ToolProcess.run(arguments)
            #expect(result.exitCode == 4, "\(result)")
        }
        #expect(try fileBytes(text) == bytes)

        // An SQLite database of another application.
        let other = directory.path("other.sqlite")
        try SQLiteFile(other).execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        let otherBytes = try fileBytes(other)
        let stats = try garage("stats", other)
        #expect(stats.exitCode == 4, "\(stats)")
        #expect(try garage("list", other).exitCode == 4)
        #expect(try fileBytes(other) == otherBytes)

        // A folder.
        #expect(try garage("stats", directory.url.path).exitCode == 4)
    }

    @Test func aStoreOfANewerFormatExits5Untouched() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)
        do {
            let file = try SQLiteFile(path, busyTimeout: 10)
            try file.executeWithoutTransaction("PRAGMA user_version = \(Garage.formatVersion + 1)")
            try file.checkpoint()
        }
        let before = try fileBytes(path)
        for arguments in [["stats", path], ["list", path], ["show", path, "GTItem", "a"], ["check", path], ["export", path],
                          ["gc", path, "--apply"], ["rename-type", path, "GTItem", "GTOther"]] {
            let result = try ToolProcess.run(arguments)
            #expect(result.exitCode == 5, "\(result)")
        }
        let importFile = directory.path("empty.jsonl")
        try Data().write(to: URL(fileURLWithPath: importFile))
        #expect(try garage("import", path, stdin: importFile).exitCode == 5)
        #expect(try fileBytes(path) == before)
    }

    /// A store file whose table's root page (an interior page of its b-tree, given 3,000 rows)
    /// is overwritten with bytes that are no page at all (as IntegrityTests damages one).
    func damagedStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("damaged.garage")
        do {
            let garage = try Garage(path: path)
            try garage.parkAll((0..<3_000).map { GTItem(id: "item \($0)", name: "Item \($0)", count: $0) })
        }
        try overwriteObjectTableRootPage(of: path)
        return path
    }

    @Test func aDamagedStoreExits7AndCheckExits1() throws {
        let directory = try TemporaryDirectory()
        let path = try damagedStore(in: directory)
        let check = try garage("check", path)
        #expect(check.exitCode == 1, "\(check)")
        #expect(check.stdout.contains("SQLite reports damage"), "\(check)")
        let checkJSON = try garage("check", path, "--json")
        #expect(checkJSON.exitCode == 1, "\(checkJSON)")
        #expect(try jsonObject(checkJSON)["isOK"] as? Bool == false)
        #expect(try jsonObject(checkJSON)["problems"] as? [String] != [])
        for arguments in [["stats", path], ["stats", path, "--json"], ["list", path], ["export", path],
                          ["show", path, "GTItem", "item 1"], ["gc", path], ["gc", path, "--apply"],
                          ["rename-type", path, "GTItem", "GTOther"]] {
            let result = try ToolProcess.run(arguments)
            #expect(result.exitCode == 7, "\(result)")
            #expect(result.signal == nil, "\(result)")
        }
    }

    /// A header SQLite would misread (its write version, which made SQLite take the file for a
    /// read-only one): `check` reports it, naming the byte, where it called the file sound; the
    /// other commands exit 7 with the same reason (issue 42).
    @Test func aDamagedHeaderIsReportedByCheckAndRefusedByTheOthers() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)
        do {
            let file = try SQLiteFile(path, busyTimeout: 10)
            try file.checkpoint()
            try file.close()
        }
        try overwrite(path, at: 18, with: [3])
        let before = try fileBytes(path)
        let reason = "byte 18 of its header (SQLite's write version) is 3"
        let check = try garage("check", path)
        #expect(check.exitCode == 1, "\(check)")
        #expect(check.stdout.hasPrefix("The store has 1 problem:"), "\(check)")
        #expect(check.stdout.contains(reason) && check.stdout.contains("writing 2 back at offset 18"), "\(check)")
        let checkJSON = try garage("check", path, "--json")
        #expect(checkJSON.exitCode == 1, "\(checkJSON)")
        #expect(try jsonObject(checkJSON)["isOK"] as? Bool == false)
        #expect((try jsonObject(checkJSON)["problems"] as? [String])?.first?.contains(reason) == true)
        for arguments in [["stats", path], ["list", path], ["gc", path, "--apply"]] {
            let result = try ToolProcess.run(arguments)
            #expect(result.exitCode == 7, "\(result)")
            #expect(result.stderr.contains(reason), "\(result)")
        }
        #expect(try fileBytes(path) == before)
    }

    // MARK: - Golden fixtures

    @Test(arguments: 1...4)
    func statsAndListReadTheGoldenSyncFixture(version: Int) throws {
        let fixture = try FixtureFile("sync.garage", version: version)
        // The tool's temporary folder, where an older store's upgraded copy goes.
        let scratch = try TemporaryDirectory()
        let stats = try garage("stats", fixture.path, "--json", environment: ["TMPDIR": scratch.url.path])
        #expect(stats.exitCode == 0, "\(stats)")
        if version < Garage.formatVersion {
            #expect(stats.stderr.contains("format version \(version); reading an upgraded copy"), "\(stats)")
        } else {
            #expect(stats.stderr.isEmpty, "\(stats)")
        }
        let object = try jsonObject(stats)
        #expect(object["formatVersion"] as? Int == version, "the store's own version: \(stats)")
        #expect(object["objects"] as? Int == 10)
        #expect(object["isEncrypted"] as? Bool == false)
        #expect(object["fileBytes"] as? Int == fixture.originalBytes.count)
        let types = try #require(object["types"] as? [[String: Any]])
        var counts: [String: Int] = [:]
        var tombstones: [String: Int] = [:]
        var byStatus: [String: [String: Int]] = [:]
        for type in types {
            let name = type["type"] as? String ?? "?"
            counts[name] = type["objects"] as? Int
            tombstones[name] = type["tombstones"] as? Int
            byStatus[name] = type["byStatus"] as? [String: Int]
        }
        #expect(counts == ["Courier": 1, "Manifest": 2, "Parcel": 6, "Receipt": 1])
        #expect(byStatus["Courier"] == ["undetermined": 0, "notSynced": 0, "syncing": 0, "synced": 1])
        #expect(byStatus["Receipt"] == ["undetermined": 1, "notSynced": 0, "syncing": 0, "synced": 0])
        #expect(byStatus["Manifest"] == ["undetermined": 0, "notSynced": 1, "syncing": 1, "synced": 0])
        if version == 1 {
            #expect(byStatus["Parcel"] == ["undetermined": 1, "notSynced": 2, "syncing": 1, "synced": 2])
            #expect(tombstones["Parcel"] == 0)
        } else {
            // From version 2: the parcel parked `.syncing` without a claim is `.notSynced`, and a tombstone.
            #expect(byStatus["Parcel"] == ["undetermined": 1, "notSynced": 3, "syncing": 0, "synced": 2])
            #expect(tombstones["Parcel"] == 1)
        }

        let list = try garage("list", fixture.path, "--json")
        #expect(list.exitCode == 0, "\(list)")
        let keys = try listedKeys(list)
        #expect(keys.count == 10)
        #expect(keys.filter { $0.hasPrefix("Parcel(") } == [
            "Parcel(p-edited)", "Parcel(p-notSynced)", "Parcel(p-set)", "Parcel(p-synced)", "Parcel(p-syncing)",
            "Parcel(p-undetermined)",
        ])
        let withDeleted = try garage("list", fixture.path, "--deleted", "--json")
        #expect(try listedKeys(withDeleted).count == (version == 1 ? 10 : 11), "\(withDeleted)")
        let text = try garage("stats", fixture.path)
        #expect(lines(text.stdout).contains("Format:     version \(version)"), "\(text)")
        // The upgraded copy is gone once the tool has ended, when it fails too.
        let failing = try garage("show", fixture.path, "Parcel", "nobody", environment: ["TMPDIR": scratch.url.path])
        #expect(failing.exitCode == 9, "\(failing)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path) == [], "left in the temporary folder")

        // Neither the copy nor the golden file changed.
        #expect(try fixture.bytes() == fixture.originalBytes, "the tool changed the v\(version) store")
        #expect(try Data(contentsOf: fixture.original) == fixture.originalBytes, "the golden file changed")
    }

    /// Every golden file reads (its format version, no change to it); `check` finds the one
    /// problem graph.garage holds; encrypted.garage, encrypted by a delegate the tool can't
    /// have, lists, and its ciphertext exports and imports unchanged.
    @Test(arguments: 1...4)
    func everyGoldenFileReads(version: Int) throws {
        for name in ["plain", "graph", "hashable", "encrypted", "empty"] {
            let fixture = try FixtureFile("\(name).garage", version: version)
            let stats = try garage("stats", fixture.path, "--json")
            #expect(stats.exitCode == 0, "\(stats)")
            #expect(try jsonObject(stats)["formatVersion"] as? Int == version, "\(stats)")
            let list = try garage("list", fixture.path, "--json")
            #expect(list.exitCode == 0, "\(list)")
            #expect(try jsonArray(list).count == (try jsonObject(stats)["objects"] as? Int), "\(name) v\(version)")
            if name == "encrypted" {
                // Encrypted by a delegate the tool can't have: counted, listed, and exported as
                // ciphertext that an import writes back as it is.
                let encrypted = try #require(jsonObject(stats)["types"] as? [[String: Any]]).compactMap { $0["encrypted"] as? Int }
                #expect(encrypted.reduce(0, +) > 0, "\(stats)")
                let exported = try garage("export", fixture.path)
                #expect(exported.exitCode == 0 && exported.stdout.contains("\"isEncrypted\":true"), "\(exported)")
                let directory = try TemporaryDirectory()
                let input = directory.path("encrypted.jsonl")
                try exported.stdoutData.write(to: URL(fileURLWithPath: input))
                let copy = directory.path("copy.garage")
                let imported = try garage("import", copy, stdin: input)
                #expect(imported.exitCode == 0, "\(imported)")
                let again = try garage("export", copy)
                #expect(again.stdoutData == exported.stdoutData, "the ciphertext changed on its way: \(again)")
            }
            let check = try garage("check", fixture.path)
            if name == "graph" {
                #expect(check.exitCode == 1, "\(check)")
                #expect(check.stdout.contains("- Ship(Ghost) references Sailor(s-deserter), which is not parked"), "\(check)")
            } else {
                #expect(check.exitCode == 0, "\(check)")
            }
            #expect(try fixture.bytes() == fixture.originalBytes, "the tool changed v\(version)/\(name).garage")
            #expect(fixture.originalBytes == (try? Data(contentsOf: fixture.original)), "the golden v\(version)/\(name).garage changed")
        }
    }

    // MARK: - Progress

    @Test func exportShowsProgressOnlyOnATerminal() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("big.garage")
        let count = 3_000
        do {
            let garage = try Garage(path: path)
            try garage.parkAll((0..<count).map { GTItem(id: String(format: "item %05d", $0), name: "Item \($0)", count: $0) })
        }
        let onTerminal = try garage("export", path, environment: ["GARAGE_PROGRESS_AFTER": "0"], stderrOnTerminal: true)
        #expect(onTerminal.exitCode == 0, "\(onTerminal)")
        #expect(onTerminal.stderr.contains("exporting"), "\(onTerminal)")
        #expect(onTerminal.stderr.contains("%"), "\(onTerminal)")
        #expect(lines(onTerminal.stdout).count == count)

        let toFile = try garage("export", path, environment: ["GARAGE_PROGRESS_AFTER": "0"])
        #expect(toFile.exitCode == 0, "\(toFile)")
        #expect(toFile.stderr.isEmpty, "\(toFile)")
        #expect(toFile.stdoutData == onTerminal.stdoutData)
        let first = try JSONSerialization.jsonObject(with: Data(lines(toFile.stdout)[0].utf8)) as? [String: Any]
        #expect(first?["identifier"] as? String == "item 00000")

        // A terminal that says nothing when the work is shorter than the delay.
        let quiet = try garage("export", path, environment: ["GARAGE_PROGRESS_AFTER": "3600"], stderrOnTerminal: true)
        #expect(quiet.exitCode == 0, "\(quiet)")
        #expect(quiet.stderr.isEmpty, "\(quiet)")
        #expect(quiet.stdoutData == toFile.stdoutData)
    }

    // MARK: - Help

    @Test func helpListsEveryCommandAndTheExitStatuses() throws {
        let help = try garage("--help")
        #expect(help.exitCode == 0, "\(help)")
        for command in ["stats", "list", "show", "check", "gc", "export", "import", "rename-type", "import-garagestorage",
                        "rekey"] {
            #expect(help.stdout.contains("  \(command) "), "\(command) is missing: \(help)")
        }
        #expect(help.stdout.contains("EXIT STATUS"), "\(help)")
        #expect(help.stdout.contains("GARAGE_KEY"), "\(help)")
        let version = try garage("--version")
        #expect(version.exitCode == 0 && !version.stdout.isEmpty, "\(version)")
        let commandHelp = try garage("import", "--help")
        #expect(commandHelp.exitCode == 0 && commandHelp.stdout.contains("line"), "\(commandHelp)")
    }
}
