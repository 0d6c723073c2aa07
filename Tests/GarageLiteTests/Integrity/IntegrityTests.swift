import Foundation
import Testing
@testable import GarageLite

/// `check()` and `collectGarbage()` on real store files, damaged through separate SQLite
/// connections where a test needs damage; and the `isRoot` column they rely on.
@Suite("Integrity and garbage collection")
struct IntegrityTests {
    // MARK: - Roots

    /// The committed `isRoot` of every row, read by another garage on the file: `["Type(id)": isRoot]`.
    private func committedRoots(_ path: String) throws -> [String: Bool] {
        var roots: [String: Bool] = [:]
        for record in try TestEngine.garage(path: path).records(limit: Int(Int32.max)) {
            roots["\(record.typeName)(\(record.identifier))"] = record.isRoot
        }
        return roots
    }

    func author(_ name: String) -> Author { Author(id: UUID(), name: name) }
    func key(_ author: Author) -> String { "Author(\(author.id.uuidString))" }

    @Test func parkAndParkAllMarkOnlyDirectlyParkedObjectsAsRoots() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("roots.sqlite")
        let garage = try TestEngine.garage(path: path)
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
        let garage = try TestEngine.garage(path: path)
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
        let garage = try TestEngine.garage(path: path)
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
        let garage = try TestEngine.garage(path: directory.path("sound.sqlite"))
        let shared = author("shared")
        try garage.parkAll([Book(id: 1, title: "", author: shared, coAuthors: [author("co")]),
                            Book(id: 2, title: "", author: shared)])
        try garage.park(Tree(id: "t", root: Branch(id: "r", leaves: 1, children: [Branch(id: "c", leaves: 2)])))
        try garage.park(Note(text: "hashable", tags: []))
        let report = try garage.check()
        #expect(report.isOK)
        #expect(report == IntegrityReport(problems: []))
        #expect(report.description.hasPrefix("The store is sound"))
        #expect(try TestEngine.garage().check().isOK)
    }

    @Test func encryptedRowsAreNotReportedAsInvalidJSON() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("encrypted.sqlite")
        let garage = try TestEngine.garage(path: path)
        garage.dataEncryptionDelegate = TestEncryptor()
        let orphan = author("orphan")
        try garage.park(Book(id: 1, title: "secret", author: orphan))
        try garage.park(Book(id: 1, title: "secret", author: author("kept")))
        let encrypted = try garage.store.allStoredRows().filter { $0.isEncrypted && (try? JSONReader.parse($0.data)) == nil }.count
        #expect(encrypted == 3)
        // Checked and collected without the key: the reference lists are not encrypted.
        let withoutKey = try TestEngine.garage(path: path)
        #expect(try withoutKey.check().isOK)
        #expect(try withoutKey.collectGarbage(dryRun: false).objects == [ObjectKey(typeName: "Author", identifier: orphan.id.uuidString)])
        #expect(try garage.retrieve(Book.self, identifier: 1)?.author.name == "kept")
    }

    @Test func aReferenceToADeletedObjectIsDangling() throws {
        let garage = try TestEngine.garage()
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

    /// The committed rows, tombstones too.
    func rowCount(_ garage: Garage) throws -> Int {
        try garage.store.allStoredRows().count
    }

    @Test func aDryRunListsExactlyTheUnreachableObjectsAndDeletesNothing() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("dry.sqlite")
        let garage = try TestEngine.garage(path: path)
        let unreachable = try parkGraphsThenOrphanSome(in: garage)
        let before = try rowCount(garage)
        let report = try garage.collectGarbage()
        #expect(report == GarbageReport(isDryRun: true, objects: unreachable))
        #expect(report.count == 6)
        #expect(report.description.hasPrefix("Dry run: 6 unreachable objects would be deleted: Author("))
        #expect(report.description.hasSuffix("Run collectGarbage(dryRun: false) to delete them."))
        #expect(try rowCount(garage) == before)
        #expect(try garage.collectGarbage(dryRun: true) == report)
    }

    @Test func collectingDeletesTheUnreachableObjectsAndNothingReachable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("collect.sqlite")
        let garage = try TestEngine.garage(path: path)
        let unreachable = try parkGraphsThenOrphanSome(in: garage)
        let before = try rowCount(garage)
        let report = try garage.collectGarbage(dryRun: false)
        #expect(report == GarbageReport(isDryRun: false, objects: unreachable))
        #expect(report.description.hasPrefix("Deleted 6 unreachable objects: "))
        #expect(try rowCount(garage) == before - 6)
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
        let garage = try TestEngine.garage(path: path)
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
        #expect(try TestEngine.garage(path: path).count(Loan.self) == 0)
        try garage.save()
        #expect(try garage.syncStatus(for: statusChanged) == .synced)
        #expect(try garage.retrieve(Loan.self, identifier: "l")?.guarantor?.name == "referenced")
        #expect(try garage.check().isOK)
    }

    @Test func insideATransactionItsChangesAreSafeAndTheCollectionCommitsAtOnce() throws {
        let garage = try TestEngine.garage()
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

    @Test func aClaimedObjectIsCollectedAndTheClaimReportsItDeleted() throws {
        let garage = try TestEngine.garage()
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

    @Test func asyncVariantsAndObserversSeeTheDeletions() async throws {
        let garage = try TestEngine.garage()
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

}

/// `Author`, after a rename: only its name matters here.
struct Writer: Codable {}

