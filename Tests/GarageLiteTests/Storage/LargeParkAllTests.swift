import Foundation
import Testing
@testable import GarageLite

/// `parkAll` of many objects writes rows while it encodes the next ones: the same results as
/// a small `parkAll`, in one transaction.
@Suite("Large parkAll")
struct LargeParkAllTests {
    private let count = Garage.streamingThreshold * 3 + 17

    @Test func everyObjectAndReferenceIsParkedInOneCall() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("large.sqlite"))
        let author = Author(id: UUID(), name: "Shared")
        let books = (0..<count).map { Book(id: $0, title: "Book \($0)", author: author) }
        try garage.parkAll(books)
        #expect(try garage.count(Book.self) == count)
        #expect(try garage.count(Author.self) == 1)
        #expect(try garage.retrieve(Book.self, identifier: count - 1)?.author.name == "Shared")
        #expect(try garage.metadata(Author.self, identifier: author.id)?.isRoot == false)
    }

    @Test func theLastOfTwoVersionsWinsAcrossBatches() throws {
        let garage = try TestEngine.garage()
        var counters = (0..<count).map { Counter(id: $0, value: $0) }
        counters.append(Counter(id: 0, value: -1))          // parked again, far later
        try garage.parkAll(counters)
        #expect(try garage.count(Counter.self) == count)
        #expect(try garage.retrieve(Counter.self, identifier: 0)?.value == -1)
    }

    /// Each park of a large parkAll sees its row as stored, whichever part of a batch it falls in
    /// (PostgreSQL reads a batch's rows a part ahead of the rules): a `.synced` object parked
    /// unchanged stays `.synced` at its revision; one changed becomes `.notSynced` at the next;
    /// one parked twice in the call ends as its second version, after its first.
    @Test func everyParkSeesItsStoredRowInALargeParkAll() throws {
        let garage = try TestEngine.garage()
        let stored = (0..<count).map { Memo(id: "m\($0)", text: "server \($0)", syncStatus: .synced) }
        try garage.parkDownloaded(stored)
        var parks = stored.map { memo in
            var memo = memo
            if Int(memo.id.dropFirst())! % 3 == 0 { memo.text = "edited" }
            return memo
        }
        parks += (0..<count).filter { $0 % 50 == 7 }.map { Memo(id: "m\($0)", text: "twice", syncStatus: .synced) }
        parks.append(Memo(id: "new", text: "new", syncStatus: .synced))
        try garage.parkAll(parks)
        for index in 0..<count {
            let id = "m\(index)"
            let memo = try #require(try garage.retrieve(Memo.self, identifier: id))
            let revision = try #require(try garage.metadata(Memo.self, identifier: id)?.revision)
            if index % 50 == 7 {
                #expect(memo.text == "twice" && memo.syncStatus == .notSynced, "\(id): \(memo)")
                #expect(revision >= 2, "\(id) at revision \(revision)")
            } else if index % 3 == 0 {
                #expect(memo.text == "edited" && memo.syncStatus == .notSynced && revision == 2, "\(id): \(memo), \(revision)")
            } else {
                #expect(memo.text == "server \(index)" && memo.syncStatus == .synced && revision == 1, "\(id): \(memo), \(revision)")
            }
        }
        #expect(try garage.retrieve(Memo.self, identifier: "new")?.syncStatus == .synced)
        #expect(try garage.count(Memo.self) == count + 1)
    }

    @Test func aFailureAfterSomeBatchesParksNothing() throws {
        let garage = try TestEngine.garage()
        try garage.park(Trip(id: "before", stops: []))
        var trips = (0..<count).map { Trip(id: "t\($0)", stops: []) }
        trips[count - 5] = Trip(id: "bad", stops: [Trip.Stop(day: 1, place: Place(id: Coordinates(x: 0, y: 0), name: "?"))])
        #expect(throws: GarageError.unsupportedIDConformance("Coordinates")) {
            try garage.parkAll(trips)
        }
        #expect(try garage.identifiers(of: Trip.self) == ["before"])
    }

    @Test func anEncryptionFailureAfterSomeBatchesParksNothing() throws {
        let garage = try TestEngine.garage()
        let encryptor = FailingAfter(successes: Garage.streamingThreshold + 300)
        garage.dataEncryptionDelegate = encryptor
        #expect(throws: FailingAfter.Failure.self) {
            try garage.parkAll((0..<count).map { Counter(id: $0, value: $0) })
        }
        #expect(try garage.count(Counter.self) == 0)
    }

    @Test func observersSeeEveryParkedObject() async throws {
        let garage = try TestEngine.garage()
        var changes = garage.changes(of: Counter.self).makeAsyncIterator()
        // The synchronous parkAll is the one that streams; an async function would pick the other.
        func parkSynchronously() throws {
            try garage.parkAll((0..<count).map { Counter(id: $0, value: $0) })
        }
        try parkSynchronously()
        let delivered = await changes.next() ?? []
        #expect(delivered.count == count)
        #expect(delivered.allSatisfy { $0.kind == .parked })
    }

    @Test func writingFromEncodeToThrowsInsteadOfWaitingForever() throws {
        let garage = try TestEngine.garage()
        let objects = (0..<count).map { WritesWhenEncoded(id: $0) }
        WritesWhenEncoded.$garage.withValue(garage) {
            #expect(throws: GarageError.self) {
                try garage.parkAll(objects)
            }
        }
        #expect(try garage.count(WritesWhenEncoded.self) == 0)
        #expect(try garage.count(Counter.self) == 0)
    }

    @Test func withAutosaveOffALargeParkAllStaysUnsaved() throws {
        let garage = try TestEngine.garage()
        garage.isAutosaveEnabled = false
        try garage.parkAll((0..<count).map { Counter(id: $0, value: $0) })
        #expect(garage.hasUnsavedChanges)
        #expect(try garage.count(Counter.self) == count)
        garage.discardUnsavedChanges()
        #expect(try garage.count(Counter.self) == 0)
    }
}

/// Encrypts a number of rows, then fails.
private final class FailingAfter: DataEncryptionDelegate, @unchecked Sendable {
    struct Failure: Error {}
    private let lock = NSLock()
    private var remaining: Int

    init(successes: Int) {
        remaining = successes
    }

    func encrypt(_ data: Data) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        guard remaining > 0 else { throw Failure() }
        remaining -= 1
        return data.base64EncodedString()
    }

    func decrypt(_ string: String) throws -> Data {
        Data(base64Encoded: string) ?? Data()
    }
}
