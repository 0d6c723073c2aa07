import Foundation
import Testing
@testable import GarageLite

// `check()` and `collectGarbage()` on store files damaged through separate SQLite connections:
// rows changed by SQL, pages overwritten. Moved from the behaviour suite (issue 25).

extension IntegrityTests {
    @Test func invalidJSONIsReportedWithItsTypeAndIdentifier() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("json.sqlite")
        let garage = try Garage(path: path)
        let writer = author("w")
        try garage.park(Book(id: 1, title: "One", author: writer))
        try garage.park(Book(id: 2, title: "Two", author: writer))
        try rawWrite(path, #"UPDATE garage_object SET data = '{"id":1,"title":' WHERE type = 'Book' AND identifier = '1'"#)
        let report = try garage.check()
        guard case let .invalidJSON(type, identifier, reason)? = report.problems.first, report.problems.count == 1 else {
            Issue.record("expected one invalid JSON problem, got \(report)")
            return
        }
        #expect(type == "Book" && identifier == "1")
        #expect(reason.hasPrefix("it is not valid JSON: ") && reason.contains("at byte"))
        #expect(report.description.contains("Book(1)") && report.description.contains("Park the object again"))
        // The report predicts what a retrieve does, and the other objects are untouched.
        #expect(throws: GarageError.self) { try garage.retrieve(Book.self, identifier: 1) }
        #expect(try garage.retrieve(Book.self, identifier: 2)?.author.name == "w")
    }

    @Test func aReferenceWhoseIdentifierIsParkedUnderAnotherTypeHasTheWrongType() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("renamed.sqlite")
        let garage = try Garage(path: path)
        let writer = author("w")
        try garage.park(Book(id: 1, title: "", author: writer))
        try garage.park(Counter(id: 1, value: 0))     // "1" exists as Counter and Book: not an issue
        // Rows moved to another type name without migrateAll, which would fix the references.
        try rawWrite(path, "UPDATE garage_object SET type = 'Writer' WHERE type = 'Author'")
        let report = try garage.check()
        #expect(report.problems == [
            .wrongTypeReference(fromType: "Book", fromIdentifier: "1", toType: "Author",
                                toIdentifier: writer.id.uuidString, foundTypes: ["Writer"]),
        ])
        #expect(report.description.contains(#"migrateAll(fromOldClassName: "Author", to: Writer.self)"#))
        #expect(report.description.contains(#"migrateAll(fromOldClassName: "Writer", to: Author.self)"#))
        // Either repair makes the store sound: moving the rows back...
        try garage.transaction {
            try garage.migrateAll(fromOldClassName: "Writer", to: Author.self)
            #expect(try garage.check().isOK == false)      // the check reads the committed store
        }
        #expect(try garage.check().isOK)
        #expect(try garage.retrieve(Book.self, identifier: 1)?.author.name == "w")
        // ...or, for an app whose type is now Writer, rewriting the references.
        try rawWrite(path, "UPDATE garage_object SET type = 'Writer' WHERE type = 'Author'")
        #expect(try garage.migrateAll(fromOldClassName: "Author", to: Writer.self) == 0)
        #expect(try garage.check().isOK)
    }

    @Test func anObjectAStaleReferenceMayMeanIsNotCollected() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("stale.sqlite")
        let garage = try Garage(path: path)
        let (meant, orphan) = (author("meant"), author("orphan"))
        try garage.park(Book(id: 1, title: "", author: meant))
        try garage.park(Book(id: 2, title: "", author: orphan))
        try garage.park(Book(id: 2, title: "", author: meant))
        try rawWrite(path, "UPDATE garage_object SET type = 'Writer' WHERE type = 'Author'")
        // Book(1)'s reference says Author; the rows are Writers now. The one it names stays.
        let report = try garage.collectGarbage(dryRun: false)
        #expect(report.objects == [ObjectKey(typeName: "Writer", identifier: orphan.id.uuidString)])
        #expect(try garage.metadata(Writer.self, identifier: meant.id) != nil)
    }

    @Test func rowsOfTypesTheAppDoesNotHaveAreChecked() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("foreign.sqlite")
        let garage = try Garage(path: path)
        try garage.park(Counter(id: 1, value: 1))
        try rawWrite(path, """
            INSERT INTO garage_object (type, identifier, data, creationDate, modificationDate, isRoot, refs) VALUES
                ('Ghost', 'g', '{}', 0, 0, 1, '[["Phantom","p"],["Counter","1"]]'),
                ('Ghost', 'h', '{}', 0, 0, 1, '[["Phantom"]]'),
                ('Ghost', 'i', '[1,', 0, 0, 1, 'nope')
            """)
        let report = try garage.check()
        #expect(report.problems.count == 4)
        #expect(report.problems[0] == .invalidReferenceList(
            typeName: "Ghost", identifier: "h", reason: #"an element is not a ["Type", "identifier"] pair of strings"#))
        #expect(report.problems[1] == .invalidReferenceList(typeName: "Ghost", identifier: "i", reason: "it is not valid JSON"))
        if case let .invalidJSON(type, identifier, _) = report.problems[2] {
            #expect(type == "Ghost" && identifier == "i")
        } else {
            Issue.record("expected invalid JSON, got \(report.problems[2])")
        }
        #expect(report.problems[3] == .danglingReference(fromType: "Ghost", fromIdentifier: "g", toType: "Phantom", toIdentifier: "p"))
    }

    @Test func theListOfProblemsIsCapped() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("capped.sqlite")
        let garage = try Garage(path: path)
        let writer = author("w")
        try garage.parkAll((0..<5).map { Book(id: $0, title: "", author: writer) })
        try garage.park(Loan(id: "l", book: Book(id: 9, title: "", author: writer), guarantor: nil))
        try rawWrite(path, """
            UPDATE garage_object SET data = 'x' WHERE type = 'Book' AND identifier < '5';
            DELETE FROM garage_object WHERE type = 'Book' AND identifier = '9'
            """)
        let all = try garage.check()
        #expect(all.problems.count == 6 && !all.isTruncated)
        #expect(all.problems.last == .danglingReference(fromType: "Loan", fromIdentifier: "l", toType: "Book", toIdentifier: "9"))
        let three = try garage.check(maximumProblems: 3)
        #expect(three.problems == Array(all.problems.prefix(3)) && three.isTruncated)
        // Full after the JSON check, with a dangling reference still to come.
        let five = try garage.check(maximumProblems: 5)
        #expect(five.problems == Array(all.problems.prefix(5)) && five.isTruncated)
        #expect(five.description.hasPrefix("The store has more problems than listed; the first 5 problems:"))
        #expect(try garage.check(maximumProblems: 6) == all)
        #expect(try garage.check(maximumProblems: 0).problems.count == 1)
    }

    /// A store file whose table's root page (an interior page of its b-tree, given 3,000 rows)
    /// is overwritten with bytes that are no page at all, once everything is in the main file.
    func damagedStore(in directory: TemporaryDirectory) throws -> String {
        let path = directory.path("damaged.sqlite")
        do {
            let garage = try Garage(path: path)
            try garage.parkAll((0..<3_000).map { Counter(id: $0, value: $0) })
            #expect(try garage.check().isOK)
        }
        try overwriteObjectTableRootPage(of: path)
        return path
    }

    @Test func aDamagedFileGivesAnSQLiteProblemNotACrash() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: try damagedStore(in: directory))
        let report = try garage.check()
        // Either SQLite's check lists the damage, or it fails on it; the rows can't be read.
        #expect(report.problems.first.map { if case .sqlite = $0 { true } else { false } } == true)
        #expect(report.problems.contains(.sqlite(
            "the check of reference lists failed: database disk image is malformed (SQLite error 11)")))
        #expect(report.description.contains("SQLite reports damage"))
        // Garbage collection can't read the rows: a clear error, and nothing written.
        #expect(throws: GarageError.self) { try garage.collectGarbage(dryRun: false) }
    }

    @Test func aDamagedFileIsReportedAsynchronouslyToo() async throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: try damagedStore(in: directory))
        let report = try await garage.check()
        #expect(report.problems.contains { if case .sqlite = $0 { true } else { false } })
    }

    @Test func anUnusableReferenceListStopsTheCollection() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("refs.sqlite")
        let garage = try Garage(path: path)
        let orphan = author("orphan")
        try garage.park(Book(id: 1, title: "", author: orphan))
        try garage.park(Book(id: 1, title: "", author: author("kept")))
        try rawWrite(path, "UPDATE garage_object SET refs = '[[\"Author\"' WHERE type = 'Book'")
        let expected = GarageError.corruptData(
            typeName: "Book", identifier: "1",
            reason: "its list of references is unusable (it is not valid JSON), so garbage can't be collected until it is repaired")
        #expect(throws: expected) { try garage.collectGarbage() }
        #expect(throws: expected) { try garage.collectGarbage(dryRun: false) }
        #expect(try rowCount(garage) == 3)
        #expect(try garage.check().problems == [
            .invalidReferenceList(typeName: "Book", identifier: "1", reason: "it is not valid JSON"),
        ])
    }
}
