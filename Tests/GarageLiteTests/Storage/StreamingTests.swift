import Foundation
import Testing
@testable import GarageLite

@Suite("Streaming reads")
struct StreamingTests {
    @Test func forEachVisitsEveryObjectOnceInIdentifierOrder() throws {
        let garage = try TestEngine.garage()
        let memos = (0..<2_345).map { Memo(id: String(format: "m%05d", $0), text: "\($0)") }
        try garage.parkAll(memos.shuffled())
        try garage.park(Counter(id: 1, value: 1))          // another type: not visited
        var visited: [String] = []
        try garage.forEach(Memo.self, batchSize: 100) { visited.append($0.id) }
        #expect(visited == memos.map(\.id))
    }

    @Test func forEachResolvesReferencesAndMayCallTheGarage() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Lem")
        try garage.parkAll((1...30).map { Book(id: $0, title: "Book \($0)", author: author) })
        var titles: [String] = []
        try garage.forEach(Book.self, batchSize: 7) { book in
            #expect(book.author.name == "Lem")
            titles.append(book.title)
            _ = try garage.count(Book.self)                 // body runs between reads
        }
        #expect(titles.count == 30)
    }

    @Test func forEachSeesUnsavedChanges() throws {
        let garage = try TestEngine.garage()
        try garage.parkAll((0..<10).map { Counter(id: $0, value: $0) })
        garage.isAutosaveEnabled = false
        try garage.delete(Counter(id: 3, value: 3))
        try garage.park(Counter(id: 10, value: 10))
        var ids: [Int] = []
        try garage.forEach(Counter.self, batchSize: 4) { ids.append($0.id) }
        #expect(ids.sorted() == [0, 1, 2, 4, 5, 6, 7, 8, 9, 10])
    }

}
