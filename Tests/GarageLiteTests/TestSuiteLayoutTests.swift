import Foundation
import Testing

/// The tests are split by what they test (issue 25): the behaviour suite, the library's promises,
/// imports no GRDB and names none of the SQLite store's tables, indexes or triggers, so that it can
/// run against any engine given to it; what depends on SQLite (the format and golden files, file
/// damage, crash safety, query plans, SQL written below the library) is in `SQLite/`.
@Suite("Test suite layout", .firstPassOnly)
struct TestSuiteLayoutTests {
    /// `Tests/GarageLiteTests`, found from this file's path.
    static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// The folder of the SQLite-specific tests, below `tests`.
    static let sqliteFolder = "SQLite/"
    /// The folder of the PostgreSQL engine's own tests (its schema, its server), below `tests`.
    static let postgresFolder = "Postgres/"

    /// Files of the behaviour suite that may still reach SQLite, for now: none.
    static let exceptions: Set<String> = []

    /// The names of the store's SQL tables, indexes and triggers, as the schema declares them
    /// (the object table, the store's facts, the index of references, …).
    static func storeNames() throws -> Set<String> {
        let schema = tests.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/GarageLiteSQLite/Schema.swift")
        let text = try String(contentsOf: schema, encoding: .utf8)
        return Set(text.matches(of: try Regex(#"\bgarage_[a-z_]+\b"#)).map { String(text[$0.range]) })
    }

    /// Every Swift file of the tests, by its path below `tests`.
    static func files() throws -> [(path: String, text: String)] {
        let enumerator = try #require(FileManager.default.enumerator(atPath: tests.path))
        return try enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map {
            ($0, try String(contentsOf: tests.appendingPathComponent($0), encoding: .utf8))
        }
    }

    /// What in `text` belongs to the SQLite tests: an import of GRDB, a name of the store's schema.
    /// One finding per line, with its number.
    static func findings(in text: String, names: Set<String>) throws -> [(line: Int, what: String)] {
        let importGRDB = try Regex(#"^\s*(@testable\s+)?import\s+(struct\s+|class\s+|enum\s+|func\s+)?GRDB\b"#)
        let name = try Regex(#"\bgarage_[a-z_]+\b"#)
        var findings: [(line: Int, what: String)] = []
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.contains(importGRDB) {
                findings.append((index + 1, "imports GRDB"))
            } else if let found = line.matches(of: name).map({ String(line[$0.range]) }).first(where: names.contains) {
                findings.append((index + 1, "names \(found)"))
            }
        }
        return findings
    }

    @Test func theBehaviourSuiteImportsNoGRDBAndNamesNoTable() throws {
        let names = try Self.storeNames()
        // (Spelled in two parts, so that this file names no table either.)
        #expect(["object", "meta", "reference", "object_sync"].allSatisfy { names.contains("garage_" + $0) })
        let files = try Self.files()
        #expect(files.count > 80)
        #expect(files.contains { $0.path.hasPrefix(Self.sqliteFolder) })
        for (path, text) in files where !path.hasPrefix(Self.sqliteFolder) && !path.hasPrefix(Self.postgresFolder)
            && !Self.exceptions.contains(path) {
            for finding in try Self.findings(in: text, names: names) {
                Issue.record("\(path):\(finding.line) \(finding.what): it belongs in \(Self.sqliteFolder) (issue 25)",
                             sourceLocation: SourceLocation(fileID: "GarageLiteTests/\(path)",
                                                            filePath: Self.tests.appendingPathComponent(path).path,
                                                            line: finding.line, column: 1))
            }
        }
    }

    /// The behaviour suite opens its garages through ``TestEngine`` (which picks the engine of
    /// the pass), and the processes it starts through `TestStores` (the same rule): a file that
    /// opens a SQLite store itself (a path, a read-only file, the SQLite engine) belongs under
    /// `SQLite/`.
    @Test func theBehaviourSuiteOpensItsGaragesThroughTheTestEngine() throws {
        let opensSQLite = try Regex(#"\bGarage\(path:|\bGarage\.readOnly\(path:|\.sqlite\(path:|\.inMemory\(|GarageEngine\.sqlite"#)
        for (path, text) in try Self.files() where !path.hasPrefix(Self.sqliteFolder) && !path.hasPrefix(Self.postgresFolder)
            && path != "Support/TestEngine.swift" && path != "TestSuiteLayoutTests.swift" && text.contains(opensSQLite) {
            Issue.record("\(path) opens a SQLite store itself: open it through TestEngine, or move the test to \(Self.sqliteFolder)")
        }
    }

    /// The check finds what it looks for, and nothing else.
    @Test func theCheckFindsAnImportAndATableName() throws {
        // Built from parts, so that this file holds neither.
        let (module, table) = ("GRDB", "garage_" + "alpha")
        let names: Set<String> = [table, "garage_" + "beta"]
        let text = [
            "import Foundation",
            "import \(module)",
            "@testable import \(module)",
            "// \"import \(module)\" in a comment, or the text of a string, is no import.",
            "let sql = \"SELECT * FROM \(table) WHERE x = 1\"",
            "let unknown = \"" + "garage_" + "gamma\"",
        ].joined(separator: "\n")
        let findings = try Self.findings(in: text, names: names)
        #expect(findings.map(\.line) == [2, 3, 5])
        #expect(findings.map(\.what) == ["imports GRDB", "imports GRDB", "names \(table)"])
    }

    /// The PostgreSQL pass (`GARAGE_TEST_ENGINE=postgres`) runs the suites that open their
    /// garages through `TestEngine`, and skips the others (`.firstPassOnly`), which would only
    /// run again as in the first pass: a file of suites names one or the other.
    @Test func everySuiteRunsOnTheEnginesItTests() throws {
        for (path, text) in try Self.files() where text.contains("@Test") && text.contains("@Suite") {
            #expect(text.contains("TestEngine") || !text.contains("@Suite(") || text.components(separatedBy: "@Suite").count - 1
                        == text.components(separatedBy: ".firstPassOnly").count - 1 - (text.contains("static var firstPassOnly") ? 1 : 0),
                    "\(path): its suites open no garage of TestEngine; mark them .firstPassOnly, or open their garages through TestEngine")
        }
    }

    /// The exceptions name files that exist.
    @Test func theExceptionsExist() {
        for path in Self.exceptions {
            #expect(FileManager.default.fileExists(atPath: Self.tests.appendingPathComponent(path).path), "\(path)")
        }
    }
}
