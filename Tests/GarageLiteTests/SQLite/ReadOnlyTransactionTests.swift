import Foundation
import GarageLite
import Testing

/// An explicit transaction whose commit fails: a read-only store file (SQLite's
/// `Garage.readOnly(path:)`) refuses the write at commit.
@Suite("Explicit transactions on a read-only store", .firstPassOnly)
struct ReadOnlyTransactionTests {
    /// A commit that fails leaves the transaction active, with its changes.
    @Test func aFailedCommitKeepsTheTransaction() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        try Garage(path: path).park(Counter(id: 1, value: 1))
        let garage = try Garage.readOnly(path: path)
        try garage.beginTransaction()
        try garage.park(Counter(id: 2, value: 2))
        #expect(throws: GarageError.self) { try garage.commitTransaction() }
        #expect(garage.isTransactionActive)
        #expect(try garage.count(Counter.self) == 2)
        try garage.rollbackTransaction()
        #expect(try garage.count(Counter.self) == 1)
    }
}
