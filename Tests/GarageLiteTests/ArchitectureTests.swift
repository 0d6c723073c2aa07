import Foundation
import Testing

/// The rules of ARCHITECTURE.md that a reader of the sources can check: where GRDB and SQL
/// may appear, how long a file may be, that no folder of a library target uses a folder that
/// uses it, and that the document's table of folders says what each one uses.
@Suite("Architecture", .firstPassOnly)
struct ArchitectureTests {
    /// The package's `Sources`, found from this file's path.
    static let allSources: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// The targets of the `GarageLite` product, from the bottom: the core (values, coders, the
    /// engine boundary), the SQLite engine on it, the façade on both.
    static let productTargets = ["GarageLiteCore", "GarageLiteSQLite", "GarageLite"]

    /// The library targets: the folders of `Sources` without a `main.swift`.
    static func libraryTargets() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: allSources.path).sorted().filter { name in
            var isFolder: ObjCBool = false
            let folder = allSources.appendingPathComponent(name)
            return FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder) && isFolder.boolValue
                && !FileManager.default.fileExists(atPath: folder.appendingPathComponent("main.swift").path)
        }
    }

    /// Every Swift file of a target, by its path below its folder.
    static func files(of target: String) throws -> [(path: String, text: String)] {
        let folder = allSources.appendingPathComponent(target)
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder.path))
        return try enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map {
            ($0, try String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8))
        }
    }

    /// The folder a file belongs to, named from `Sources`: `GarageLiteCore/Coding`, `GarageLite`
    /// (the façade's root), `GarageLiteSQLite`. The core's root holds the bottom layer, the error
    /// type and the key that names objects in errors: `GarageLiteCore`.
    static func folder(of path: String, in target: String) -> String {
        ([target] + path.split(separator: "/").dropLast().map(String.init)).joined(separator: "/")
    }

    /// The Swift files of the product's targets, each with its folder.
    static func productFiles() throws -> [(folder: String, path: String, text: String)] {
        try productTargets.flatMap { target in
            try files(of: target).map { (folder(of: $0.path, in: target), "\(target)/\($0.path)", $0.text) }
        }
    }

    /// Which folders each folder of `files` uses, with the type names it uses of each: the
    /// names its code (not its comments, nor the text of its strings: an error's description
    /// may name a type for the reader) mentions of the types the other folders declare.
    static func folderUses(_ files: [(folder: String, path: String, text: String)]) throws -> [String: [String: Set<String>]] {
        let declaration = try Regex(#"(?m)^(?:public |package |private |fileprivate |final |indirect )*(?:struct|class|enum|protocol|typealias)\s+(\w+)"#)
        var declaredIn: [String: String] = [:]
        for (folder, _, text) in files {
            for match in text.matches(of: declaration) {
                if let name = match.output[1].substring { declaredIn[String(name)] = folder }
            }
        }
        let stringLiteral = try Regex(#""(?:[^"\\\n]|\\.)*""#)
        var uses: [String: [String: Set<String>]] = [:]
        for (folder, _, text) in files {
            let code = text.split(separator: "\n").map { line in
                line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line)
            }.joined(separator: "\n").replacing(stringLiteral, with: "\"\"")
            let words = Set(code.split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
            for word in words {
                if let other = declaredIn[word], other != folder {
                    uses[folder, default: [:]][other, default: []].insert(word)
                }
            }
        }
        return uses
    }

    /// GRDB is a dependency of the SQLite engine's target only (Package.swift); a target can still
    /// import a module built beside it, so this reads the sources too. SQL of the object table
    /// is the SQLite engine's, or PostgreSQL's.
    @Test func onlyTheSQLiteEngineImportsGRDBOrHoldsSQL() throws {
        let files = try Self.productFiles()
        #expect(files.count > 40)
        // (The table's name in two parts: outside Tests/GarageLiteTests/SQLite/, no test file names
        // it; see TestSuiteLayoutTests.)
        let table = "garage_" + "object"
        for (folder, path, text) in files where folder != "GarageLiteSQLite" {
            #expect(!text.contains("import GRDB"), "\(path) imports GRDB")
            #expect(!text.contains(table), "\(path) names the table: SQL belongs to GarageLiteSQLite")
        }
        for target in try Self.libraryTargets() where !Self.productTargets.contains(target) {
            for (path, text) in try Self.files(of: target) {
                #expect(!text.contains("import GRDB"), "\(target)/\(path) imports GRDB")
            }
        }
    }

    /// ARCHITECTURE.md: no source file over 500 lines; split it where it holds two topics.
    @Test func noSourceFileIsLongerThan500Lines() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: Self.allSources.path).sorted()
        #expect(targets.contains("GarageLitePostgres") && targets.contains("garage"))
        for target in targets {
            for (path, text) in try Self.files(of: target) {
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
                #expect(lines <= 500, "\(target)/\(path) has \(lines) lines")
            }
        }
    }

    /// ARCHITECTURE.md: one body per public operation. No synchronous function has an `async`
    /// twin (same name and argument labels, in the library) whose body is the same but for
    /// `await` over 4 lines or more: such an operation is described once (a `StoreCall`, a
    /// `StoreWork`) and run by the two runners.
    @Test func noOperationIsWrittenTwice() throws {
        struct Body { var isAsync: Bool; var lines: [String]; var path: String }
        let declaration = try Regex(#"\bfunc\s+(\w+)\s*(?:<[^>{]*>)?\s*\("#)
        var bodies: [String: [Body]] = [:]
        for (_, path, text) in try Self.productFiles() {
            let characters = Array(text)
            for match in text.matches(of: declaration) {
                // The argument labels, to the matching parenthesis.
                var index = text.distance(from: text.startIndex, to: match.range.upperBound)
                var depth = 1
                let parametersStart = index
                while index < characters.count, depth > 0 {
                    if characters[index] == "(" { depth += 1 } else if characters[index] == ")" { depth -= 1 }
                    index += 1
                }
                let parameters = String(characters[parametersStart..<max(parametersStart, index - 1)])
                let labels = parameters.split(separator: ",").compactMap { $0.split(separator: ":").first }
                    .map { $0.split(separator: " ").filter { !$0.hasPrefix("@") }.first.map(String.init) ?? "" }
                guard let open = characters[index...].firstIndex(of: "{") else { continue }
                let signature = String(characters[index..<open])
                // A requirement without a body: the brace found is another declaration's.
                if signature.contains("func ") || signature.contains("}") || signature.contains("var ") { continue }
                var end = open + 1
                depth = 1
                while end < characters.count, depth > 0 {
                    if characters[end] == "{" { depth += 1 } else if characters[end] == "}" { depth -= 1 }
                    end += 1
                }
                let body = String(characters[(open + 1)..<max(open + 1, end - 1)])
                let lines = body.split(separator: "\n").map { line in
                    line.replacing(/\/\/.*/, with: "").replacing(/\bawait\s+/, with: "")
                        .split(whereSeparator: \.isWhitespace).joined(separator: " ")
                }.filter { !$0.isEmpty }
                let name = "\(text[match.output[1].range!])(\(labels.joined(separator: ":")))"
                bodies[name, default: []].append(Body(isAsync: signature.contains("async"), lines: lines, path: path))
            }
        }
        for (name, found) in bodies {
            for sync in found where !sync.isAsync {
                for twin in found where twin.isAsync && twin.lines == sync.lines && sync.lines.count >= 4 {
                    Issue.record("\(name) is written twice (\(sync.path), \(twin.path)): describe it once, run it by the two runners")
                }
            }
        }
    }

    /// In every library target, and across the product's three, no folder uses a folder that
    /// uses it.
    @Test func noFolderUsesAFolderThatUsesIt() throws {
        let targets = try Self.libraryTargets()
        #expect(Set(targets).isSuperset(of: Self.productTargets + ["GarageLitePostgres", "GarageLiteServer", "GarageLiteClient"]))
        #expect(!targets.contains("garage-demo"))
        func checkNoCycle(_ uses: [String: [String: Set<String>]], in name: String) {
            for (folder, used) in uses {
                for (other, names) in used {
                    if let back = uses[other]?[folder] {
                        Issue.record("\(name): \(folder) uses \(other) (\(names.sorted())) and \(other) uses \(folder) (\(back.sorted()))")
                    }
                }
            }
        }
        for target in targets where !Self.productTargets.contains(target) {
            let files = try Self.files(of: target).map { (Self.folder(of: $0.path, in: target), $0.path, $0.text) }
            checkNoCycle(try Self.folderUses(files), in: target)
        }
        let uses = try Self.folderUses(try Self.productFiles())
        checkNoCycle(uses, in: "the GarageLite product")
        // The façade is on top; the error type and the threading helpers are at the bottom.
        #expect(uses["GarageLiteCore"] == nil)
        #expect(Set(uses["GarageLiteCore/Threading"]?.keys ?? [:].keys) == ["GarageLiteCore"])
        // The targets' order, which the compiler keeps too.
        for (folder, used) in uses {
            for other in used.keys {
                let (from, to) = (folder.split(separator: "/")[0], other.split(separator: "/")[0])
                #expect(Self.productTargets.firstIndex(of: String(to))! <= Self.productTargets.firstIndex(of: String(from))!,
                        "\(folder) uses \(other)")
            }
        }
    }

    /// ARCHITECTURE.md's table of folders: a row for each folder of the product's targets, whose
    /// "depends on" names exactly the folders its code uses (the core's root, `GarageError` and
    /// `ObjectKey`, which every folder uses, left out), written `GarageLiteCore/Coding/`…, or `—`
    /// for none.
    @Test func theTableOfFoldersSaysWhatEachFolderUses() throws {
        let document = try String(contentsOf: Self.allSources.deletingLastPathComponent().appendingPathComponent("ARCHITECTURE.md"),
                                  encoding: .utf8)
        let section = try #require(document.components(separatedBy: "\n## Folders\n").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let files = try Self.productFiles()
        let uses = try Self.folderUses(files)
        var documented: [String: Set<String>] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3, let first = cells.first else { continue }
            func name(_ cell: String) -> String {
                let bare = cell.replacingOccurrences(of: "`", with: "").trimmingCharacters(in: .whitespaces)
                return bare.hasSuffix("/") ? String(bare.dropLast()) : bare
            }
            let dependsOn = try #require(cells.last)
            documented[name(first)] = dependsOn == "—" ? [] : Set(dependsOn.split(separator: ",").map { name(String($0)) })
        }
        let folders = Set(files.map(\.folder)).subtracting(["GarageLiteCore"])
        #expect(Set(documented.keys) == folders, "the table's rows are the folders")
        for folder in folders.sorted() {
            let used = Set(uses[folder]?.keys.map { $0 } ?? []).subtracting(["GarageLiteCore"])
            #expect(documented[folder] == used,
                    "ARCHITECTURE.md: \(folder) depends on \(used.isEmpty ? "—" : used.sorted().map { "`\($0)/`" }.joined(separator: ", "))")
        }
    }
}
