import Foundation
import Testing
@testable import GarageLite

@Suite("Many threads at once")
struct ConcurrencyTests {
    @Test func severalThreadsParkAndRetrieveAtOnce() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("garage.sqlite"))
        let threads = 8
        let perThread = 50
        let failures = Protected<[String]>([])

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            do {
                for index in 0..<perThread {
                    let id = thread * 1000 + index
                    let author = Author(id: UUID(), name: "author \(id)")
                    try garage.park(Book(id: id, title: "book \(id)", author: author))
                    guard let book = try garage.retrieve(Book.self, identifier: id),
                          book.title == "book \(id)", book.author.name == "author \(id)" else {
                        failures.write { $0.append("book \(id) did not read back") }
                        continue
                    }
                    // Readers of other threads' objects see whole graphs or nothing.
                    let other = ((thread + 1) % threads) * 1000 + index
                    if let book = try garage.retrieve(Book.self, identifier: other), book.author.name != "author \(other)" {
                        failures.write { $0.append("book \(other) has the wrong author") }
                    }
                    _ = try garage.count(Book.self)
                }
            } catch {
                failures.write { $0.append("thread \(thread): \(error)") }
            }
        }
        #expect(failures.read { $0 } == [])
        #expect(try garage.count(Book.self) == threads * perThread)
        #expect(try garage.count(Author.self) == threads * perThread)
    }

    @Test func concurrentTransactionsAndUnsavedChangesStayApart() throws {
        let garage = try TestEngine.garage()
        let failures = Protected<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            do {
                for round in 0..<25 {
                    try garage.transaction {
                        try garage.park(Counter(id: thread * 100 + round, value: round))
                        try garage.park(Counter(id: thread * 100 + round + 50, value: round))
                    }
                }
            } catch {
                failures.write { $0.append("\(error)") }
            }
        }
        #expect(failures.read { $0 } == [])
        #expect(try garage.count(Counter.self) == 200)
        #expect(!garage.hasUnsavedChanges)
    }

    @Test func aGarageIsSendable() async throws {
        let garage = try TestEngine.garage()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 0..<20 {
                group.addTask {
                    try await garage.park(Counter(id: id, value: id * 2))
                }
            }
            try await group.waitForAll()
        }
        #expect(try await garage.retrieveAll(Counter.self).map(\.value).sorted() == (0..<20).map { $0 * 2 })
    }
}
