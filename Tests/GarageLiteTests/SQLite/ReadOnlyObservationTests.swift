import Foundation
import GarageLite
import Testing

/// A read-only store file (SQLite's `Garage.readOnly(path:)`) is told of its writer's commits,
/// as any other garage on the store is (SharedStoreObservationTests, on every engine).
@Suite("Observing from a read-only store", .firstPassOnly)
struct ReadOnlyObservationTests {
    @Test(.timeLimit(.minutes(2)))
    func aReadOnlyGarageObservesTheWritersCommits() async throws {
        let directory = try TemporaryDirectory()
        let writer = try Garage(path: directory.path("store.garage"))
        try await writer.park(Memo(id: "a", text: "1"))
        let reader = try Garage.readOnly(path: directory.path("store.garage"))
        // Subscribed before the park: the subscription read the object's stamp, so the park
        // is told however soon it lands (the time limit ends the test if it never is).
        let values = try reader.changes(to: Memo.self, identifier: "a")
        try await writer.park(Memo(id: "a", text: "2"))
        var told: [String?] = []
        for try await value in values {
            told.append(value?.text)
            if value?.text == "2" { break }
        }
        #expect(told.last == "2")
    }
}
