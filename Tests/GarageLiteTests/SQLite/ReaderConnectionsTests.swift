import Foundation
import GRDB
import Testing
@testable import GarageLite
import GarageLiteSQLite

/// Synchronous reads of a file store go through the garage's own read-only connections
/// (`ReaderConnections`); these tests check that nothing a reader sees is stale, and that
/// reads fall back to the pool when those connections are busy or can't be opened.
@Suite("Reader connections", .firstPassOnly)
struct ReaderConnectionsTests {
    @Test func aReadSeesEveryCommitOfAnotherGarageOnTheSameFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let writer = try Garage(path: path)
        let reader = try Garage(path: path)

        try writer.park(Counter(id: 1, value: 1))
        #expect(try reader.retrieve(Counter.self, identifier: 1)?.value == 1)
        // The reader connection is reused: each statement still reads the latest commit.
        for value in 2...20 {
            try writer.park(Counter(id: 1, value: value))
            #expect(try reader.retrieve(Counter.self, identifier: 1)?.value == value)
            #expect(try reader.retrieveAll(Counter.self).map(\.value) == [value])
        }
        let author = Author(id: UUID(), name: "Ann")
        try writer.park(Book(id: 7, title: "Graphs", author: author))
        #expect(try reader.retrieve(Book.self, identifier: 7)?.author.name == "Ann")
        try writer.park(Author(id: author.id, name: "Ann B."))
        #expect(try reader.retrieve(Book.self, identifier: 7)?.author.name == "Ann B.")

        try writer.delete(Counter(id: 1, value: 0))
        #expect(try reader.retrieve(Counter.self, identifier: 1) == nil)
    }

    @Test func moreThreadsThanReaderConnectionsAllRead() throws {
        let directory = try TemporaryDirectory()
        let garage = try Garage(path: directory.path("busy.sqlite"))
        try garage.parkAll((0..<200).map { Counter(id: $0, value: $0) })

        let failures = Protected(0)
        DispatchQueue.concurrentPerform(iterations: 32) { worker in
            for round in 0..<50 {
                let id = (worker * 7 + round) % 200
                do {
                    if try garage.retrieve(Counter.self, identifier: id)?.value != id {
                        failures.write { $0 += 1 }
                    }
                } catch {
                    failures.write { $0 += 1 }
                }
            }
        }
        #expect(failures.read { $0 } == 0)
    }

    @Test func readsFallBackToThePoolWhenNoReaderCanBeOpened() throws {
        let directory = try TemporaryDirectory()
        let readers = ReaderConnections(
            path: directory.path("missing/folder/store.sqlite"), configuration: Configuration(), maximumCount: 2)
        #expect(readers.withReader { _, _ in 1 } == nil)
        // It doesn't try again on every read.
        #expect(readers.withReader { _, _ in 1 } == nil)
    }

    @Test func readerConnectionsAreReadOnlyAndReused() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        _ = try Garage(path: path)
        let readers = ReaderConnections(path: path, configuration: Configuration(), maximumCount: 1)
        let first = try #require(readers.withReader { db, _ in ObjectIdentifier(db) })
        let second = try #require(readers.withReader { db, _ in ObjectIdentifier(db) })
        #expect(first == second)
        // So are the statements it stepped: one statement, prepared once.
        let statements = try #require(readers.withReader { db, statements in
            try (1...2).map { _ in ObjectIdentifier(try statements.statement(Self.countSQL, in: db)) }
        })
        #expect(statements[0] == statements[1])
        let again = try #require(readers.withReader { db, statements in
            ObjectIdentifier(try statements.statement(Self.countSQL, in: db))
        })
        #expect(again == statements[0])
        let writeError = readers.withReader { db, _ in
            Result { try db.execute(sql: "DELETE FROM garage_object") }
        }
        #expect(throws: DatabaseError.self) { try writeError?.get() }
        // While the only connection is borrowed, another read gets none: it goes to the pool.
        let nested = readers.withReader { _, _ in readers.withReader { _, _ in 1 } }
        #expect(nested == .some(nil))
    }

    private static let countSQL = "SELECT COUNT(*) FROM garage_object WHERE isDeleted = 0"

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "counts open files through /proc"))
    func closingLetsTheKeptStatementsGoSoThatTheConnectionsClose() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        _ = try Garage(path: path)
        let before = try Self.openDescriptors(of: path)
        let readers = ReaderConnections(path: path, configuration: Configuration(), maximumCount: 1)
        _ = try readers.withReader { db, statements in try statements.statement(Self.countSQL, in: db) }
        #expect(try Self.openDescriptors(of: path) > before)
        // A connection closed with a statement left unfinalized stays open (SQLITE_BUSY): the
        // file would keep a reader, and the store's log could not be removed at close.
        #expect(readers.close() == 0)
        #expect(try Self.openDescriptors(of: path) == before)
    }

    /// How many of this process's file descriptors are open on the store file.
    private static func openDescriptors(of path: String) throws -> Int {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        return try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").filter { descriptor in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor)) == target
        }.count
    }
}
