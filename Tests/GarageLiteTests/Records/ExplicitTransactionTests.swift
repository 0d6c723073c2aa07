import Foundation
@testable import GarageLite
import Testing

/// Issue 13: transactions begun and ended by separate calls, for code that can't put its work
/// in a closure (SwiftLocal's begin, commit, roll back).
@Suite("Explicit transactions")
struct ExplicitTransactionTests {
    @Test func changesJoinTheTransactionUntilItCommits() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("garage.sqlite"))
        let other = try TestEngine.garage(path: directory.path("garage.sqlite"))
        try garage.park(Counter(id: 1, value: 1))
        #expect(!garage.isTransactionActive)
        try garage.beginTransaction()
        #expect(garage.isTransactionActive)
        try garage.park(Counter(id: 2, value: 2))
        try garage.delete(Counter.self, identifier: 1)
        // Every call of this garage sees them, from any thread; another garage doesn't.
        #expect(try garage.identifiers(of: Counter.self) == ["2"])
        let fromAnotherThread = onAnotherThread { try? garage.count(Counter.self) }
        #expect(fromAnotherThread == 1)
        #expect(try other.identifiers(of: Counter.self) == ["1"])
        try garage.commitTransaction()
        #expect(!garage.isTransactionActive)
        #expect(try other.identifiers(of: Counter.self) == ["2"])
    }

    @Test func aRollbackForgetsEveryChangeIncludingNestedOnes() throws {
        let garage = try TestEngine.garage()
        try garage.beginTransaction()
        try garage.park(Counter(id: 1, value: 1))
        try garage.transaction {                       // commits into the explicit one
            try garage.park(Counter(id: 2, value: 2))
        }
        #expect(try garage.count(Counter.self) == 2)
        try garage.rollbackTransaction()
        #expect(try garage.count(Counter.self) == 0)
        #expect(!garage.isTransactionActive)
    }

    @Test func misuseIsAClearError() throws {
        let garage = try TestEngine.garage()
        #expect(throws: GarageError.transactionMisuse(
            operation: "commit a transaction", reason: "no transaction is active; call beginTransaction() first")) {
            try garage.commitTransaction()
        }
        #expect(throws: GarageError.self) { try garage.rollbackTransaction() }
        try garage.beginTransaction()
        let error = #expect(throws: GarageError.self) { try garage.beginTransaction() }
        #expect(error?.description.hasPrefix("Cannot begin a transaction: one is active already") == true)
        try garage.rollbackTransaction()
    }

    @Test func itWorksAcrossAwait() async throws {
        let garage = try TestEngine.garage()
        try garage.beginTransaction()
        try await garage.park(Counter(id: 1, value: 1))
        let count = try await Task.detached { try await garage.count(Counter.self) }.value
        #expect(count == 1)
        try await garage.commitTransaction()
        #expect(try await garage.count(Counter.self) == 1)
    }
}
