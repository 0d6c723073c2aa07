import Foundation
import GarageLitePostgres
import Testing
@testable import GarageLite

/// The watch of other commits looks at once when the engine hears of one (issue 44's live
/// changes in milliseconds): the pause that a wake ends, and PostgreSQL's notifications that wake it.
@Suite("Waking the commit watch")
struct CommitWakeTests {
    struct WakeNote: Codable, Identifiable {
        var id: String
        var text: String
    }

    @Test(.timeLimit(.minutes(1)))
    func aWakeBeforeTheWaitEndsItAtOnce() async {
        let wakeup = Wakeup()
        wakeup.wake()
        wakeup.wake()
        // An hour's pause: the test's time limit fails it if the kept wake were lost.
        await wakeup.wait(nanoseconds: 3_600_000_000_000)
    }

    @Test(.timeLimit(.minutes(1)))
    func aWakeEndsAWaitThatWouldLastAnHour() async {
        let wakeup = Wakeup()
        let (started, didStart) = AsyncStream.makeStream(of: Void.self)
        let waiting = Task {
            didStart.yield()
            await wakeup.wait(nanoseconds: 3_600_000_000_000)
        }
        for await _ in started { break }
        // Wakes until the wait has ended: a wake before the wait began is kept for it.
        wakeup.wake()
        await waiting.value
    }

    @Test func aShortWaitEndsWithoutAWake() async {
        let wakeup = Wakeup()
        await wakeup.wait(nanoseconds: 1_000_000)
        await wakeup.wait(nanoseconds: 0)
    }

    @Test(.timeLimit(.minutes(1)), .enabled(if: TestEngine.postgresURL != nil, "no PostgreSQL server: set GARAGE_POSTGRES_URL"))
    func anotherGaragesCommitWakesTheWatchOnPostgreSQL() async throws {
        let url = TestEngine.schemaURL(TestEngine.postgresURL!, schema: TestEngine.newSchemaName())
        let writer = try Garage(postgresURL: url)
        let watched = try Garage(postgresURL: url)
        let engine = try #require(watched.store.engine as? any WatchesOtherCommits)
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self)
        let stop = engine.wakeOnOthersCommits { wake.yield() }
        defer { stop() }
        engine.startWatch { _ in }
        var heard = wakes.makeAsyncIterator()
        // The first wake says the listener listens (what came before, a look compares).
        _ = await heard.next()
        try await writer.park(WakeNote(id: "1", text: "from another garage"))
        _ = try #require(await heard.next())
        #expect(try await watched.retrieve(WakeNote.self, identifier: "1")?.text == "from another garage")
    }
}
