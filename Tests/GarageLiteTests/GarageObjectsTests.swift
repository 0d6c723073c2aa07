import Foundation
import Testing
@testable import GarageLite

@Suite("Parking and retrieving objects")
struct GarageObjectsTests {
    @Test func personWithBrotherAndSiblings() throws {
        let garage = try TestEngine.garage()
        let sam = Person(name: "Sam", address: Address(street: "1 Main St", city: "Springfield", zip: "12345"))
        let max = Person(name: "Max", age: 28)
        let ada = Person(name: "Ada", age: 25)
        sam.brother = max
        sam.siblings = [max, ada]
        sam.importantDates = [Date(timeIntervalSinceReferenceDate: 1), Date(timeIntervalSinceReferenceDate: 2.5)]
        try garage.park(sam)

        #expect(try garage.count(Person.self) == 3)
        #expect(try garage.identifiers(of: Person.self) == ["Ada", "Max", "Sam"])
        let retrieved = try #require(try garage.retrieve(Person.self, identifier: "Sam"))
        #expect(retrieved.address == sam.address)
        #expect(retrieved.brother?.name == "Max")
        #expect(retrieved.brother?.age == 28)
        #expect(retrieved.siblings.map(\.name) == ["Max", "Ada"])
        #expect(retrieved.importantDates == sam.importantDates)
        // One referenced row is decoded once per retrieve: both references share an instance.
        #expect(retrieved.brother === retrieved.siblings.first)

        // The brother is its own row, retrievable by itself.
        let brother = try #require(try garage.retrieve(Person.self, identifier: "Max"))
        #expect(brother.age == 28)
    }

    @Test func parentJSONHoldsIdentifierStubs() throws {
        let garage = try TestEngine.garage()
        let sam = Person(name: "Sam")
        sam.brother = Person(name: "Max")
        sam.siblings = [Person(name: "Max"), Person(name: "Ada")]
        try garage.park(sam)
        let row = try #require(try garage.store.storedRow(ObjectKey(typeName: "Person", identifier: "Sam")))
        #expect(row.data.contains(#""brother":"Max""#))
        #expect(row.data.contains(#""siblings":["Max","Ada"]"#))
        #expect(row.isRoot)
        #expect(try ReferenceList.decode(row.references) == [
            ObjectKey(typeName: "Person", identifier: "Max"), ObjectKey(typeName: "Person", identifier: "Ada"),
        ])
        let max = try #require(try garage.store.storedRow(ObjectKey(typeName: "Person", identifier: "Max")))
        #expect(!max.isRoot)
    }

    @Test func treeThreeLevelsDeepParkedThroughItsRoot() throws {
        let garage = try TestEngine.garage()
        let tree = Tree(id: "oak", root: Branch(id: "trunk", leaves: 0, children: [
            Branch(id: "left", leaves: 1, children: [
                Branch(id: "left.1", leaves: 10), Branch(id: "left.2", leaves: 20),
            ]),
            Branch(id: "right", leaves: 2, children: [Branch(id: "right.1", leaves: 30)]),
        ]))
        try garage.park(tree)
        #expect(try garage.count(Tree.self) == 1)
        #expect(try garage.count(Branch.self) == 6)
        let retrieved = try #require(try garage.retrieve(Tree.self, identifier: "oak"))
        #expect(retrieved.root == tree.root)
        let left = try #require(try garage.retrieve(Branch.self, identifier: "left"))
        #expect(left.children.map(\.leaves) == [10, 20])
    }

    /// An ID type of the app's own conforms to GarageIdentifier with an empty extension.
    @Test func anIdentifierTypeOfTheAppsOwn() throws {
        let garage = try TestEngine.garage()
        try garage.park(Ticket(id: TicketID(number: 7), title: "seven"))
        #expect(try garage.retrieve(Ticket.self, identifier: TicketID(number: 7))?.title == "seven")
        #expect(try garage.delete(Ticket.self, identifier: TicketID(number: 7)))
        #expect(try garage.count(Ticket.self) == 0)
    }

    @Test func intAndUUIDIdentifiers() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Le Guin")
        try garage.park(Book(id: 42, title: "The Dispossessed", author: author))

        let byInt = try #require(try garage.retrieve(Book.self, identifier: 42))
        #expect(byInt.title == "The Dispossessed")
        #expect(try garage.retrieve(Book.self, identifier: "42")?.title == "The Dispossessed")
        #expect(try garage.retrieve(Book.self, identifier: 43) == nil)
        #expect(try garage.retrieve(Author.self, identifier: author.id)?.name == "Le Guin")
        #expect(try garage.identifiers(of: Author.self) == [author.id.uuidString])
    }

    @Test func hashableIdentifierIsStableAcrossGaragesAndProcesses() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let note = Note(text: "buy milk", tags: ["home"])
        let identifier: String
        do {
            let garage = try TestEngine.garage(path: path)
            try garage.park(note)
            identifier = try garage.identifier(for: note)
        }
        // The SHA-256 of the note's canonical JSON, {"syncStatus":0,"tags":["home"],"text":"buy milk"}
        // (computed independently): a per-process `hashValue` could never equal this constant,
        // so the same object finds the same row after a relaunch.
        #expect(identifier == "6b5f0c052ae733c33311743845851b46216361c0848a3ffeb90c3a71f0cb356e")
        let reopened = try TestEngine.garage(path: path)
        #expect(try reopened.identifier(for: note) == identifier)
        #expect(try reopened.retrieve(Note.self, identifier: identifier) == note)
        // Parking it again updates the same row instead of adding a duplicate.
        try reopened.park(note)
        #expect(try reopened.count(Note.self) == 1)
    }

    @Test func hashableIdentifierIgnoresSyncStatus() throws {
        let garage = try TestEngine.garage()
        var note = Note(text: "call mom", tags: [])
        try garage.park(note)
        let identifier = try garage.identifier(for: note)
        note.syncStatus = .synced
        #expect(try garage.identifier(for: note) == identifier)
        try garage.setSyncStatus(.synced, for: note)
        let retrieved = try #require(try garage.retrieve(Note.self, identifier: identifier))
        #expect(retrieved.syncStatus == .synced)
        try garage.delete(retrieved)
        #expect(try garage.count(Note.self) == 0)
    }

    @Test func missingConformanceAndUnsupportedIDs() throws {
        let garage = try TestEngine.garage()
        #expect(throws: GarageError.missingConformance("Anonymous")) {
            try garage.park(Anonymous(value: 1))
        }
        let place = Place(id: Coordinates(x: 1, y: 2), name: "Home")
        #expect(throws: GarageError.unsupportedIDConformance("Coordinates")) {
            try garage.park(place)
        }
        // `retrieve(Place.self, identifier: Coordinates(…))` no longer compiles: an identifier
        // is a GarageIdentifier. One that conforms without being LosslessStringConvertible is
        // still refused.
        #expect(throws: GarageError.unsupportedIDConformance("Opaque")) {
            try garage.retrieve(Place.self, identifier: Opaque())
        }
        #expect(throws: GarageError.unsupportedIDConformance("Coordinates")) {
            try garage.delete(place)
        }
        #expect(GarageError.unsupportedIDConformance("Coordinates").description
            == "Identifiable ID type 'Coordinates' must be String, UUID, or LosslessStringConvertible")
        #expect(GarageError.missingConformance("Anonymous").description
            == "Missing Identifiable or Hashable conformance for type: Anonymous")
    }

    /// `park(notes)` meant `parkAll(notes)`: it says so, instead of a conformance error for
    /// `Array<Memo>`, or (for a `Hashable` array) one row holding the whole array.
    @Test func aCollectionGivenAsOneObjectPointsToTheRightCall() throws {
        let garage = try TestEngine.garage()
        let memos = [Memo(id: "a", text: ""), Memo(id: "b", text: "")]
        #expect(throws: GarageError.collectionNotAnObject(typeName: "Array<Memo>", operation: "park")) {
            try garage.park(memos)
        }
        #expect(throws: GarageError.collectionNotAnObject(typeName: "Array<Anonymous>", operation: "park")) {
            try garage.parkAll([[Anonymous(value: 1)]])
        }
        #expect(throws: GarageError.collectionNotAnObject(typeName: "Set<Int>", operation: "park")) {
            try garage.park(Set([1, 2]))
        }
        #expect(throws: GarageError.collectionNotAnObject(typeName: "Array<Memo>", operation: "identify")) {
            try garage.identifier(for: memos)
        }
        #expect(try garage.count(Memo.self) == 0 && garage.count(Array<Anonymous>.self) == 0)
        #expect(GarageError.collectionNotAnObject(typeName: "Array<Memo>", operation: "park").description
            == "Cannot park Array<Memo> as one object: it is a collection. Use parkAll(_:) to park its "
            + "elements, or wrap it in a struct with an identity to keep it as one object.")
        // A string is a value, and an Identifiable collection an object of its own.
        try garage.park("a note to self")
        try garage.park(MemoShelf(id: "s", memos: memos))
        #expect(try garage.retrieve(MemoShelf.self, identifier: "s")?.memos == memos)
    }

    @Test func parkAllWithAnUnsupportedIDDeepInTheGraphParksNothing() throws {
        let garage = try TestEngine.garage()
        let good = Trip(id: "good", stops: [])
        let bad = Trip(id: "bad", stops: [
            Trip.Stop(day: 1, place: Place(id: Coordinates(x: 0, y: 0), name: "Origin")),
        ])
        #expect(throws: GarageError.unsupportedIDConformance("Coordinates")) {
            try garage.parkAll([good, bad])
        }
        #expect(try garage.count(Trip.self) == 0)
        #expect(try garage.count(Place.self) == 0)
    }

    @Test func referencesInDictionariesSetsNestedArraysAndInlineStructs() throws {
        let garage = try TestEngine.garage()
        let authors = (0..<6).map { Author(id: UUID(), name: "Author \($0)") }
        let shelf = Shelf(
            id: "main",
            byGenre: ["sf": authors[0], "poetry": authors[1]],
            byRank: [1: authors[2]],
            favourites: [authors[3], authors[0]],
            rows: [[authors[4]], [authors[5], authors[0]]],
            optionalAuthors: [authors[1], nil],
            display: Shelf.Display(label: "Staff picks", featured: authors[2]))
        try garage.park(shelf)
        #expect(try garage.count(Author.self) == 6)

        let row = try #require(try garage.store.storedRow(ObjectKey(typeName: "Shelf", identifier: "main")))
        // Every author is a stub: no author's name is inlined in the shelf's JSON.
        #expect(!row.data.contains("Author "))
        #expect(row.data.contains(#""rows":[["\#(authors[4].id.uuidString)"]"#))

        let retrieved = try #require(try garage.retrieve(Shelf.self, identifier: "main"))
        #expect(retrieved.byGenre["sf"]?.name == "Author 0")
        #expect(retrieved.byRank[1]?.name == "Author 2")
        #expect(Set(retrieved.favourites.map(\.name)) == ["Author 3", "Author 0"])
        #expect(retrieved.rows.map { $0.map(\.name) } == [["Author 4"], ["Author 5", "Author 0"]])
        #expect(retrieved.optionalAuthors.map { $0?.name } == ["Author 1", nil])
        #expect(retrieved.display?.featured.name == "Author 2")
        #expect(retrieved.display?.label == "Staff picks")
    }

    @Test func missingRequiredReferenceThrowsAndMissingOptionalOneIsNil() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Borges")
        let book = Book(id: 7, title: "Ficciones", author: author)
        let guarantor = Author(id: UUID(), name: "Bioy")
        try garage.park(Loan(id: "loan", book: book, guarantor: guarantor))

        try garage.delete(guarantor, rule: .rowOnly)
        let loan = try #require(try garage.retrieve(Loan.self, identifier: "loan"))
        #expect(loan.guarantor == nil)
        #expect(loan.book.author.name == "Borges")

        try garage.delete(book, rule: .rowOnly)
        do {
            _ = try garage.retrieve(Loan.self, identifier: "loan")
            Issue.record("retrieving a loan whose book is gone should throw")
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.debugDescription.contains("Missing Identifiable reference"))
            #expect(context.debugDescription.contains("Book"))
            #expect(context.debugDescription.contains("7"))
        }
    }

    @Test func missingOptionalReferenceInsideAnArrayIsNil() throws {
        let garage = try TestEngine.garage()
        let kept = Author(id: UUID(), name: "kept")
        let gone = Author(id: UUID(), name: "gone")
        try garage.park(Shelf(id: "s", optionalAuthors: [kept, gone]))
        try garage.delete(gone, rule: .rowOnly)
        let shelf = try #require(try garage.retrieve(Shelf.self, identifier: "s"))
        #expect(shelf.optionalAuthors.map { $0?.name } == ["kept", nil])
    }

    @Test func referenceCycleParksAndRetrievingItThrowsACycleError() throws {
        let garage = try TestEngine.garage()
        let a = Friend(id: "a")
        let b = Friend(id: "b")
        a.friend = b
        b.friend = a
        try garage.park(a)
        #expect(try garage.count(Friend.self) == 2)
        #expect(throws: GarageError.referenceCycle(
            typeName: "Friend", identifier: "a", cycle: ["Friend(a)", "Friend(b)", "Friend(a)"])) {
            try garage.retrieve(Friend.self, identifier: "a")
        }
        // Breaking the cycle makes both retrievable again.
        b.friend = nil
        try garage.park(b)
        let retrieved = try #require(try garage.retrieve(Friend.self, identifier: "a"))
        #expect(retrieved.friend?.id == "b")
    }

    @Test func objectReferencedTwiceIsWrittenOnce() throws {
        let garage = try TestEngine.garage()
        let max = Person(name: "Max")
        let sam = Person(name: "Sam")
        sam.brother = max
        sam.siblings = [max, max]
        try garage.park(sam)
        let revision = try garage.store.storedRow(ObjectKey(typeName: "Person", identifier: "Max"))?.revision
        #expect(revision == 1)
    }

    @Test func parkingAgainReplacesAndBumpsRevisionOnlyWhenContentChanges() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 1))
        try garage.park(Counter(id: 1, value: 1))
        func revision() throws -> Int64? {
            try garage.store.storedRow(ObjectKey(typeName: "Counter", identifier: "1"))?.revision
        }
        #expect(try revision() == 1)
        try garage.park(Counter(id: 1, value: 2))
        #expect(try revision() == 2)
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 2)
        #expect(try garage.count(Counter.self) == 1)
    }

    @Test func deleteRemovesOnlyThatRow() throws {
        let garage = try TestEngine.garage()
        let sam = Person(name: "Sam")
        sam.brother = Person(name: "Max")
        try garage.park(sam)
        try garage.delete(sam)
        #expect(try garage.retrieve(Person.self, identifier: "Sam") == nil)
        #expect(try garage.retrieve(Person.self, identifier: "Max") != nil)
        #expect(throws: GarageError.failedToRetrieveObject("Person", "Sam")) {
            try garage.delete(sam)
        }
        #expect(GarageError.failedToRetrieveObject("Person", "Sam").description
            == "Failed to retrieve object of type: Person with identifier: Sam")
    }

    @Test func deleteAllAndDeleteAllObjectsReturnHowManyTheyDeleted() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll((1...5).map { Counter(id: $0, value: $0) })
        try garage.park(Tree(id: "t", root: Branch(id: "b", leaves: 1)))
        #expect(try garage.deleteAll(Counter.self) == 5)
        #expect(try garage.deleteAll(Counter.self) == 0)
        #expect(try garage.count(Branch.self) == 1)
        #expect(try garage.deleteAllObjects() == 2)
        #expect(try garage.count(Tree.self) == 0)
    }

    @Test func retrieveAllReturnsEveryObjectOfTheTypeOnly() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll([Counter(id: 2, value: 20), Counter(id: 1, value: 10)])
        try garage.park(Person(name: "Sam"))
        let counters = try garage.retrieveAll(Counter.self)
        #expect(counters.map(\.value).sorted() == [10, 20])
        #expect(try garage.retrieveAll(Person.self).map(\.name) == ["Sam"])
        #expect(try garage.retrieveAll(Tree.self).isEmpty)
    }

    @Test func migrateAllMovesRowsToTheNewTypeName() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll([Counter(id: 1, value: 10), Counter(id: 2, value: 20)])
        #expect(try garage.migrateAll(fromOldClassName: "Counter", to: RenamedCounter.self) == 2)
        #expect(try garage.count(Counter.self) == 0)
        #expect(try garage.retrieve(RenamedCounter.self, identifier: 2)?.value == 20)
    }

    @Test func migrateAllKeepsReferencesToMovedRowsWorking() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Calvino")
        try garage.park(Book(id: 1, title: "Invisible Cities", author: author))
        try garage.migrateAll(fromOldClassName: "Book", to: Volume.self)
        let volume = try #require(try garage.retrieve(Volume.self, identifier: 1))
        #expect(volume.author.name == "Calvino")
        let refs = try garage.store.storedRow(ObjectKey(typeName: "Volume", identifier: "1"))?.references
        #expect(refs == ReferenceList.encode([ObjectKey(typeName: "Author", identifier: author.id.uuidString)]))
    }

    @Test func typeNameIsTheSwiftTypeName() throws {
        let garage = try TestEngine.garage()
        try garage.park(Generic(id: "g", value: 3))
        let types = try garage.store.storedTypes()
        #expect(types == ["Generic<Int>"])
        #expect(try garage.retrieve(Generic<Int>.self, identifier: "g")?.value == 3)
        #expect(try garage.retrieve(Generic<String>.self, identifier: "g") == nil)
    }
}

extension GarageObjectsTests {
    @Test func hashableIdentifierDoesNotDependOnSetOrder() throws {
        let garage = try TestEngine.garage()
        let words = (0..<200).map { "word\($0)" }
        var forward = Set<String>(minimumCapacity: 16)
        words.forEach { forward.insert($0) }
        var backward = Set<String>(minimumCapacity: 1024)
        words.reversed().forEach { backward.insert($0) }
        let first = Labelled(labels: forward, scores: [Coordinates(x: 1, y: 2): 3, Coordinates(x: 0, y: 0): 1])
        let second = Labelled(labels: backward, scores: [Coordinates(x: 0, y: 0): 1, Coordinates(x: 1, y: 2): 3])
        #expect(try garage.identifier(for: first) == garage.identifier(for: second))
        try garage.park(first)
        try garage.park(second)
        #expect(try garage.count(Labelled.self) == 1)
        let row = try #require(try garage.store.storedRows(ofType: "Labelled").first)
        // Stored sorted, so the JSON (and the identifier) is the same in every process.
        #expect(row.data.contains(#""labels":["word0","word1","word10","word100","word101""#))
        #expect(try garage.retrieveAll(Labelled.self).first == first)
    }

    @Test func onlyThePropertyNamedSyncStatusIsKeptOutOfTheJSON() throws {
        let garage = try TestEngine.garage()
        try garage.park(Upload(id: "u", syncStatus: .synced, serverStatus: .syncing, lastStatus: .notSynced))
        let upload = try #require(try garage.retrieve(Upload.self, identifier: "u"))
        #expect(upload.syncStatus == .synced)
        #expect(upload.serverStatus == .syncing)
        #expect(upload.lastStatus == .notSynced)
    }

    @Test func anOptionalIDIsRefusedWhateverItsValue() throws {
        let garage = try TestEngine.garage()
        #expect(throws: GarageError.unsupportedIDConformance("Optional<String>")) {
            try garage.park(MaybeIdentified(id: "x"))
        }
        #expect(throws: GarageError.unsupportedIDConformance("Optional<String>")) {
            try garage.park(MaybeIdentified(id: nil))
        }
    }

    @Test func aLongChainOfReferencesParksWithoutDeepRecursion() throws {
        let garage = try TestEngine.garage()
        var node = Link(id: 0, next: nil)
        for id in 1..<5_000 {
            node = Link(id: id, next: node)
        }
        try garage.park(node)
        #expect(try garage.count(Link.self) == 5_000)
        let row = try #require(try garage.store.storedRow(ObjectKey(typeName: "Link", identifier: "4999")))
        #expect(row.data == #"{"id":4999,"next":"4998"}"#)
    }

    @Test func valuesNestedTooDeepAreRefusedWhenParked() throws {
        let garage = try TestEngine.garage()
        var nested = Nested(child: nil)
        for _ in 0..<(JSONReader.maximumDepth + 10) {
            nested = Nested(child: nested)
        }
        do {
            try garage.park(Holder(id: "deep", nested: nested))
            Issue.record("parking a value nested deeper than the limit should throw")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(context.debugDescription.contains("nested"))
        }
        #expect(try garage.count(Holder.self) == 0)
    }

    @Test func aDecodingErrorNamesTheRowItHappenedIn() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 7, value: 1))
        try garage.migrateAll(fromOldClassName: "Counter", to: Labelled.self)
        do {
            _ = try garage.retrieveAll(Labelled.self)
            Issue.record("decoding a Counter row as Labelled should throw")
        } catch let DecodingError.keyNotFound(_, context) {
            #expect(context.debugDescription.hasPrefix("Labelled(7): "))
        }
    }

    @Test func callingTheGarageFromInitFromThrowsInsteadOfCrashing() throws {
        let garage = try TestEngine.garage()
        try garage.park(Reentrant(id: "r"))
        Reentrant.$garage.withValue(garage) {
            #expect(throws: GarageError.reentrantCall(operation: "count Counter")) {
                try garage.retrieve(Reentrant.self, identifier: "r")
            }
        }
    }
}

/// An `Identifiable` collection: an object of its own, parked as one row.
private struct MemoShelf: Codable, Identifiable, RandomAccessCollection {
    var id: String
    var memos: [Memo]
    var startIndex: Int { memos.startIndex }
    var endIndex: Int { memos.endIndex }
    subscript(position: Int) -> Memo { memos[position] }
}

/// An identifier type of an app's own.
private struct TicketID: LosslessStringConvertible, Hashable, Codable, GarageIdentifier {
    var number: Int
    init(number: Int) { self.number = number }
    init?(_ description: String) {
        guard description.hasPrefix("T-"), let number = Int(description.dropFirst(2)) else { return nil }
        self.number = number
    }
    var description: String { "T-\(number)" }
}

private struct Ticket: Codable, Identifiable {
    var id: TicketID
    var title: String
}

/// A GarageIdentifier with no string form.
private struct Opaque: GarageIdentifier {}
