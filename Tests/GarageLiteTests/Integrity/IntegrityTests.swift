import Foundation
import GRDB
import Testing
@testable import GarageLite

/// `check()` and `collectGarbage()` on real store files, damaged through separate SQLite
/// connections where a test needs damage; and the `isRoot` column they rely on.
@Suite("Integrity and garbage collection")
struct IntegrityTests {
    // MARK: - Roots

    /// The committed `isRoot` of every row, read by another connection: `["Type(id)": isRoot]`.
    private func committedRoots(_ path: String) throws -> [String: Bool] {
        try DatabaseQueue(path: path).read { db in
            var roots: [String: Bool] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT type, identifier, isRoot FROM garage_object") {
                roots["\(row[0] as String)(\(row[1] as String))"] = row[2] as Bool
            }
            return roots
        }
    }

    private func author(_ name: String) -> Author { Author(id: UUID(), name: name) }
    private func key(_ author: Author) -> String { "Author(\(author.id.uuidString))" }

    @Test func parkAndParkAllMarkOnlyDirectlyParkedObjectsAsRoots() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("roots.sqlite")
        let garage = try Garage(path: path)
        let (a1, a2, a3, a4) = (author("1"), author("2"), author("3"), author("4"))
        try garage.park(Book(id: 1, title: "", author: a1))
        // Parked directly, then referenced: stays a root.
        try garage.park(a2)
        try garage.park(Book(id: 2, title: "", author: a2))
        // Referenced, then parked directly: becomes a root.
        try garage.park(Book(id: 3, title: "", author: a3))
        try garage.park(a3)
        // In one parkAll, referenced before and after being parked directly.
        try garage.parkAll([Book(id: 4, title: "", author: a4)])
        try garage.parkAll([Book(id: 5, title: "", author: a4)])
        let roots = try committedRoots(path)
        #expect(roots == [
            "Book(1)": true, "Book(2)": true, "Book(3)": true, "Book(4)": true, "Book(5)": true,
            key(a1): false, key(a2): true, key(a3): true, key(a4): false,
        ])
        // One parkAll, where an object is referenced before, or after, it is parked itself.
        let (f1, f2, f3, f4) = (Friend(id: "f1"), Friend(id: "f2"), Friend(id: "f3"), Friend(id: "f4"))
        f1.friend = f2
        f4.friend = f3
        try garage.parkAll([f1, f2])
        try garage.parkAll([f3, f4])
        #expect(try committedRoots(path).filter { $0.key.hasPrefix("Friend") } == [
            "Friend(f1)": true, "Friend(f2)": true, "Friend(f3)": true, "Friend(f4)": true,
        ])
    }

    @Test func aStreamingParkAllMarksRootsAcrossBatches() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("streaming.sqlite")
        let garage = try Garage(path: path)
        let child = Friend(id: "only referenced")
        let early = Friend(id: "referenced in the first batch, parked directly in the last")
        let late = Friend(id: "parked directly in the first batch, referenced in the last")
        var friends = (0..<Garage.streamingThreshold * 2).map { index in
            let friend = Friend(id: "f\(index)")
            friend.friend = child
            return friend
        }
        friends[0].friend = early
        friends[1] = late
        friends[friends.count - 1].friend = late
        friends.append(early)
        try garage.parkAll(friends)
        let roots = try committedRoots(path)
        #expect(roots.count == friends.count + 1)
        #expect(roots["Friend(\(child.id))"] == false)
        #expect(roots["Friend(\(early.id))"] == true)
        #expect(roots["Friend(\(late.id))"] == true)
        #expect(roots.values.filter { $0 }.count == friends.count)
    }

    @Test func unsavedChangesAndTransactionsKeepRootsAsTheCallsWouldHave() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("pending.sqlite")
        let garage = try Garage(path: path)
        let (a1, a2, a3) = (author("1"), author("2"), author("3"))
        garage.isAutosaveEnabled = false
        try garage.park(a1)                                         // a root, then referenced:
        try garage.park(Book(id: 1, title: "", author: a1))         // folded into one change
        try garage.park(Book(id: 2, title: "", author: a2))
        try garage.save()
        garage.isAutosaveEnabled = true
        try garage.transaction {
            try garage.park(Book(id: 3, title: "", author: a3))
            try garage.park(a3)
        }
        var roots = try committedRoots(path)
        #expect(roots[key(a1)] == true && roots[key(a2)] == false && roots[key(a3)] == true)
        #expect(roots["Book(1)"] == true && roots["Book(3)"] == true)
        // Deleted, then parked again only as a reference: no longer a root.
        try garage.transaction {
            try garage.delete(a1, rule: .rowOnly)
            try garage.park(Book(id: 1, title: "again", author: a1))
        }
        roots = try committedRoots(path)
        #expect(roots[key(a1)] == false)
    }

    // MARK: - check()

    @Test func aSoundStoreIsOK() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("sound.sqlite"))
        let shared = author("shared")
        try garage.parkAll([Book(id: 1, title: "", author: shared, coAuthors: [author("co")]),
                            Book(id: 2, title: "", author: shared)])
        try garage.park(Tree(id: "t", root: Branch(id: "r", leaves: 1, children: [Branch(id: "c", leaves: 2)])))
        try garage.park(Note(text: "hashable", tags: []))
        let report = try garage.check()
        #expect(report.isOK)
        #expect(report == IntegrityReport(problems: []))
        #expect(report.description.hasPrefix("The store is sound"))
        #expect(try Garage.inMemory().check().isOK)
    }

    @Test func invalidJSONIsReportedWithItsTypeAndIdentifier() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("json.sqlite")
        let garage = try Garage(path: path)
        let writer = author("w")
        try garage.park(Book(id: 1, title: "One", author: writer))
        try garage.park(Book(id: 2, title: "Two", author: writer))
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: #"UPDATE garage_object SET data = '{"id":1,"title":' WHERE type = 'Book' AND identifier = '1'"#)
        }
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

    @Test func encryptedRowsAreNotReportedAsInvalidJSON() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("encrypted.sqlite")
        let garage = try Garage(path: path)
        garage.dataEncryptionDelegate = TestEncryptor()
        let orphan = author("orphan")
        try garage.park(Book(id: 1, title: "secret", author: orphan))
        try garage.park(Book(id: 1, title: "secret", author: author("kept")))
        let encrypted = try DatabaseQueue(path: path).read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM garage_object WHERE isEncrypted = 1 AND NOT json_valid(data)")
        }
        #expect(encrypted == 3)
        // Checked and collected without the key: the reference lists are not encrypted.
        let withoutKey = try Garage(path: path)
        #expect(try withoutKey.check().isOK)
        #expect(try withoutKey.collectGarbage(dryRun: false).objects == [ObjectKey(typeName: "Author", identifier: orphan.id.uuidString)])
        #expect(try garage.retrieve(Book.self, identifier: 1)?.author.name == "kept")
    }

    @Test func aReferenceToADeletedObjectIsDangling() throws {
        let garage = try Garage.inMemory()
        let writer = author("w")
        try garage.park(Book(id: 1, title: "", author: writer))
        try garage.park(Loan(id: "l", book: Book(id: 2, title: "", author: writer), guarantor: writer))
        try garage.delete(writer, rule: .rowOnly)
        let report = try garage.check()
        let id = writer.id.uuidString
        #expect(report.problems == [
            .danglingReference(fromType: "Book", fromIdentifier: "1", toType: "Author", toIdentifier: id),
            .danglingReference(fromType: "Book", fromIdentifier: "2", toType: "Author", toIdentifier: id),
            .danglingReference(fromType: "Loan", fromIdentifier: "l", toType: "Author", toIdentifier: id),
        ])
        #expect(report.problems[0].description.contains("Park Author(\(id)) again"))
        try garage.park(writer)
        #expect(try garage.check().isOK)
    }

    @Test func aReferenceWhoseIdentifierIsParkedUnderAnotherTypeHasTheWrongType() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("renamed.sqlite")
        let garage = try Garage(path: path)
        let writer = author("w")
        try garage.park(Book(id: 1, title: "", author: writer))
        try garage.park(Counter(id: 1, value: 0))     // "1" exists as Counter and Book: not an issue
        // Rows moved to another type name without migrateAll, which would fix the references.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE garage_object SET type = 'Writer' WHERE type = 'Author'")
        }
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
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE garage_object SET type = 'Writer' WHERE type = 'Author'")
        }
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
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE garage_object SET type = 'Writer' WHERE type = 'Author'")
        }
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
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: """
                INSERT INTO garage_object (type, identifier, data, creationDate, modificationDate, isRoot, refs) VALUES
                    ('Ghost', 'g', '{}', 0, 0, 1, '[["Phantom","p"],["Counter","1"]]'),
                    ('Ghost', 'h', '{}', 0, 0, 1, '[["Phantom"]]'),
                    ('Ghost', 'i', '[1,', 0, 0, 1, 'nope')
                """)
        }
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
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE garage_object SET data = 'x' WHERE type = 'Book' AND identifier < '5'")
            try db.execute(sql: "DELETE FROM garage_object WHERE type = 'Book' AND identifier = '9'")
        }
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
    private func damagedStore(in directory: TemporaryDirectory) throws -> String {
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

    // MARK: - collectGarbage()

    /// A store where some referenced-only objects are unreachable; returns them.
    private func parkGraphsThenOrphanSome(in garage: Garage) throws -> [ObjectKey] {
        let (orphan, kept, shared, direct) = (author("orphan"), author("kept"), author("shared"), author("direct"))
        // Parked again with another author: the first one is left behind.
        try garage.park(Book(id: 1, title: "", author: orphan))
        try garage.park(Book(id: 1, title: "", author: kept))
        // Still referenced by another parent.
        try garage.parkAll([Book(id: 2, title: "", author: shared), Book(id: 3, title: "", author: shared)])
        try garage.park(Book(id: 2, title: "", author: kept))
        // Also parked directly: a root.
        try garage.park(direct)
        try garage.park(Book(id: 4, title: "", author: direct))
        try garage.park(Book(id: 4, title: "", author: kept))
        // A chain whose head is dropped: the grandchild goes too, unless reachable elsewhere.
        let twig = Branch(id: "twig", leaves: 1)
        try garage.park(Tree(id: "t1", root: Branch(id: "r", leaves: 0, children: [
            Branch(id: "c", leaves: 0, children: [Branch(id: "g", leaves: 0), twig]),
        ])))
        try garage.park(Tree(id: "t2", root: Branch(id: "x", leaves: 0, children: [twig])))
        try garage.park(Tree(id: "t1", root: Branch(id: "r2", leaves: 0)))
        // A cycle whose only way in is deleted; and one still reachable.
        let (f1, f2, x) = (Friend(id: "f1"), Friend(id: "f2"), Friend(id: "x"))
        f1.friend = f2
        f2.friend = f1
        x.friend = f1
        try garage.park(x)
        try garage.delete(x)
        let (h1, h2, y) = (Friend(id: "h1"), Friend(id: "h2"), Friend(id: "y"))
        h1.friend = h2
        h2.friend = h1
        y.friend = h1
        try garage.park(y)
        return [ObjectKey(typeName: "Author", identifier: orphan.id.uuidString),
                ObjectKey(typeName: "Branch", identifier: "c"), ObjectKey(typeName: "Branch", identifier: "g"),
                ObjectKey(typeName: "Branch", identifier: "r"),
                ObjectKey(typeName: "Friend", identifier: "f1"), ObjectKey(typeName: "Friend", identifier: "f2")].sorted()
    }

    private func rowCount(_ path: String) throws -> Int {
        try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM garage_object") ?? 0 }
    }

    @Test func aDryRunListsExactlyTheUnreachableObjectsAndDeletesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("dry.sqlite")
        let garage = try Garage(path: path)
        let unreachable = try parkGraphsThenOrphanSome(in: garage)
        let before = try rowCount(path)
        let report = try garage.collectGarbage()
        #expect(report == GarbageReport(isDryRun: true, objects: unreachable))
        #expect(report.count == 6)
        #expect(report.description.hasPrefix("Dry run: 6 unreachable objects would be deleted: Author("))
        #expect(report.description.hasSuffix("Run collectGarbage(dryRun: false) to delete them."))
        #expect(try rowCount(path) == before)
        #expect(try garage.collectGarbage(dryRun: true) == report)
    }

    @Test func collectingDeletesTheUnreachableObjectsAndNothingReachable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("collect.sqlite")
        let garage = try Garage(path: path)
        let unreachable = try parkGraphsThenOrphanSome(in: garage)
        let before = try rowCount(path)
        let report = try garage.collectGarbage(dryRun: false)
        #expect(report == GarbageReport(isDryRun: false, objects: unreachable))
        #expect(report.description.hasPrefix("Deleted 6 unreachable objects: "))
        #expect(try rowCount(path) == before - 6)
        #expect(try garage.metadata(Friend.self, identifier: "f1") == nil)
        #expect(try garage.metadata(Branch.self, identifier: "g") == nil)
        // Everything reachable is whole.
        let books = try garage.retrieveAll(Book.self)
        #expect(books.map(\.author.name) == ["kept", "kept", "shared", "kept"])
        #expect(try garage.retrieveAll(Author.self).map(\.name).sorted() == ["direct", "kept", "shared"])
        #expect(try garage.retrieve(Tree.self, identifier: "t2")?.root.children.map(\.id) == ["twig"])
        #expect(try garage.retrieve(Tree.self, identifier: "t1")?.root.id == "r2")
        #expect(try garage.identifiers(of: Friend.self) == ["h1", "h2", "y"])
        #expect(try garage.check().isOK)
        let again = try garage.collectGarbage(dryRun: false)
        #expect(again.objects.isEmpty && again.description == "No unreachable objects: nothing was deleted.")
    }

    @Test func theUnsavedChangesOfTheGarageAreSafeAndStayUnsaved() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("unsaved.sqlite")
        let garage = try Garage(path: path)
        let (statusChanged, referenced, collected, kept) = (author("status"), author("referenced"), author("collected"), author("kept"))
        for (index, orphan) in [statusChanged, referenced, collected].enumerated() {
            try garage.park(Book(id: index, title: "", author: orphan))
            try garage.park(Book(id: index, title: "", author: kept))
        }
        garage.isAutosaveEnabled = false
        try garage.setSyncStatus(.synced, for: statusChanged)
        try garage.park(Loan(id: "l", book: Book(id: 9, title: "", author: kept), guarantor: referenced))

        let preview = try garage.collectGarbage()
        #expect(preview.objects == [ObjectKey(typeName: "Author", identifier: collected.id.uuidString)])
        let report = try garage.collectGarbage(dryRun: false)
        #expect(report.objects == preview.objects)
        // Nothing saved: another garage on the file sees no loan.
        #expect(garage.hasUnsavedChanges)
        #expect(try Garage(path: path).count(Loan.self) == 0)
        try garage.save()
        #expect(try garage.syncStatus(for: statusChanged) == .synced)
        #expect(try garage.retrieve(Loan.self, identifier: "l")?.guarantor?.name == "referenced")
        #expect(try garage.check().isOK)
    }

    @Test func insideATransactionItsChangesAreSafeAndTheCollectionCommitsAtOnce() throws {
        let garage = try Garage.inMemory()
        let (referenced, collected, kept) = (author("referenced"), author("collected"), author("kept"))
        for (index, orphan) in [referenced, collected].enumerated() {
            try garage.park(Book(id: index, title: "", author: orphan))
            try garage.park(Book(id: index, title: "", author: kept))
        }
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try garage.transaction {
                try garage.setSyncStatus(.synced, for: referenced)
                let report = try garage.collectGarbage(dryRun: false)
                #expect(report.objects == [ObjectKey(typeName: "Author", identifier: collected.id.uuidString)])
                throw Abort()
            }
        }
        #expect(try garage.metadata(for: referenced).syncStatus == .notSynced)
        #expect(try garage.metadata(Author.self, identifier: collected.id) == nil)
        #expect(try garage.collectGarbage().objects == [ObjectKey(typeName: "Author", identifier: referenced.id.uuidString)])
    }

    @Test func theRealRunTakesTheWriteLockFirstAndTheDryRunTakesNone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("locked.sqlite")
        let garage = try Garage(path: path, busyTimeout: 0.05)
        let orphan = author("orphan")
        try garage.park(Book(id: 1, title: "", author: orphan))
        try garage.park(Book(id: 1, title: "", author: author("kept")))
        try garage.collectGarbage(dryRun: false)
        // Nothing left to delete: only a transaction that takes the lock up front can wait for it.
        let other = try DatabaseQueue(path: path)
        try other.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            defer { try? db.execute(sql: "ROLLBACK") }
            #expect(throws: GarageError.storeBusy(operation: "collect garbage", path: path)) {
                try garage.collectGarbage(dryRun: false)
            }
            #expect(try garage.collectGarbage().objects.isEmpty)
            #expect(try garage.check().isOK)
        }
    }

    @Test func aClaimedObjectIsCollectedAndTheClaimReportsItDeleted() throws {
        let garage = try Garage.inMemory()
        let (orphan, kept) = (author("orphan"), author("kept"))
        try garage.park(Book(id: 1, title: "", author: orphan))
        try garage.park(Book(id: 1, title: "", author: kept))
        let claim = try garage.claim(Author.self, limit: 10)
        #expect(Set(claim.identifiers) == [orphan.id.uuidString, kept.id.uuidString])
        #expect(try garage.collectGarbage(dryRun: false).count == 1)
        let report = try garage.complete(claim)
        #expect(report.deleted == [orphan.id.uuidString])
        #expect(report.synced == [kept.id.uuidString])
    }

    @Test func anUnusableReferenceListStopsTheCollection() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("refs.sqlite")
        let garage = try Garage(path: path)
        let orphan = author("orphan")
        try garage.park(Book(id: 1, title: "", author: orphan))
        try garage.park(Book(id: 1, title: "", author: author("kept")))
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE garage_object SET refs = '[[\"Author\"' WHERE type = 'Book'")
        }
        let expected = GarageError.corruptData(
            typeName: "Book", identifier: "1",
            reason: "its list of references is unusable (it is not valid JSON), so garbage can't be collected until it is repaired")
        #expect(throws: expected) { try garage.collectGarbage() }
        #expect(throws: expected) { try garage.collectGarbage(dryRun: false) }
        #expect(try rowCount(path) == 3)
        #expect(try garage.check().problems == [
            .invalidReferenceList(typeName: "Book", identifier: "1", reason: "it is not valid JSON"),
        ])
    }

    @Test func asyncVariantsAndObserversSeeTheDeletions() async throws {
        let garage = try Garage.inMemory()
        let (orphan, kept) = (author("orphan"), author("kept"))
        try await garage.park(Book(id: 1, title: "", author: orphan))
        try await garage.parkAll([Book(id: 1, title: "", author: kept)])
        #expect(try await garage.metadata(Book.self, identifier: 1)?.isRoot == true)
        #expect(try await garage.metadata(for: orphan).isRoot == false)
        var changes = garage.changes(of: Author.self).makeAsyncIterator()
        let preview = try await garage.collectGarbage()
        #expect(preview.isDryRun && preview.count == 1)
        let report = try await garage.collectGarbage(dryRun: false)
        #expect(report.objects == [ObjectKey(typeName: "Author", identifier: orphan.id.uuidString)])
        #expect(await changes.next() == [GarageChange(typeName: "Author", identifier: orphan.id.uuidString, kind: .deleted)])
        #expect(try await garage.check().isOK)
    }

    @Test func theWalkFollowsReferencesThroughThePrimaryKey() throws {
        let garage = try Garage.inMemory()
        let plan = try garage.store.read("plan") { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + Store.unreachableRowsSQL, arguments: ["[]"])
                .map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("SEARCH referenced USING INDEX sqlite_autoindex_garage_object_1 (type=? AND identifier=?)") },
                "\(plan)")
    }
}

/// `Author`, after a rename: only its name matters here.
private struct Writer: Codable {}

