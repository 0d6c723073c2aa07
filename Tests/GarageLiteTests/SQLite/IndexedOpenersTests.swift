import Foundation
import GarageStressModels
import GRDB
import Testing
@testable import GarageLite

/// Issue 41, item 4: a long-lived garage that declared a value index and a text index, and
/// only read meanwhile, was reported to fail its next park with "no such table: garage_object
/// (SQLite error 17)", SQLITE_SCHEMA, once two other processes had opened the store, with
/// advice about the folder and the free space.
@Suite("Openers of an indexed store", .firstPassOnly)
struct IndexedOpenersTests {
    /// Declares the indexes every opener declares (`garage-stress-worker … index-and-park`).
    static func declareIndexes(_ garage: Garage) throws {
        try garage.index(StressDocument.self, on: Field("version"))
        try garage.textIndex(StressDocument.self, on: Field("body"))
    }

    /// Runs `count` other processes, one after the other, that each open the store, declare the
    /// indexes, park a document and close it.
    static func runOpeners(_ count: Int, round: Int, path: String, directory: TemporaryDirectory) throws {
        let worker = try #require(stressWorkerExecutable(), "garage-stress-worker is built next to the tests")
        for opener in 0..<count {
            let identifier = "opener-\(round)-\(opener)"
            let process = try WorkerProcess(name: identifier, executable: worker,
                                            arguments: [path, "index-and-park", identifier], directory: directory.url)
            #expect(process.wait(timeout: 60))
            #expect(process.exitedCleanly, "\(process.outputText)")
        }
    }

    /// The garage keeps its statements (the park's, the reads') from one access to the next,
    /// across the other processes' opens, declarations and parks.
    @Test(.timeLimit(.minutes(2)), arguments: [1, 2, 3])
    func aGarageParksAfterOtherProcessesOpenedTheStore(openers: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("indexed.garage")
        let garage = try Garage(path: path)
        try garage.park(StressDocument(id: "mine", version: 0, body: "kept open all along", syncStatus: .notSynced))
        try Self.declareIndexes(garage)
        for round in 0..<3 {
            // Only reads, until the others have come and gone.
            #expect(try garage.retrieve(StressDocument.self, identifier: "mine")?.version == round)
            #expect(try garage.count(Query(StressDocument.self).filter(Field("version") == round)) >= 1)
            try Self.runOpeners(openers, round: round, path: path, directory: directory)
            try garage.park(StressDocument(id: "mine", version: round + 1, body: "parked after round \(round)",
                                           syncStatus: .notSynced))
            #expect(try garage.retrieve(Query(StressDocument.self).search("round \(round)")).map(\.id) == ["mine"])
        }
        #expect(try garage.count(StressDocument.self) == 1 + 3 * openers)
        #expect(try garage.indexes().count == 2)
    }

    /// Another garage replaces the text index and adds a value index (new tables, triggers and
    /// statistics: the schema changes twice) while this one holds statements prepared before.
    @Test func keptStatementsSurviveTheSchemaChangesOfAnotherConnection() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("changing.garage")
        let garage = try Garage(path: path)
        try Self.declareIndexes(garage)
        try garage.park(StressDocument(id: "mine", version: 0, body: "first words", syncStatus: .notSynced))
        #expect(try garage.retrieve(Query(StressDocument.self).search("first")).map(\.id) == ["mine"])
        let other = try Garage(path: path)
        try other.textIndex(StressDocument.self, on: Field("body"), Field("id"))
        try other.index(StressDocument.self, on: Field("id"))
        try garage.park(StressDocument(id: "mine", version: 1, body: "second words", syncStatus: .notSynced))
        #expect(try garage.retrieve(Query(StressDocument.self).search("second")).map(\.id) == ["mine"])
        #expect(try garage.retrieve(Query(StressDocument.self).search("first")).isEmpty)
        #expect(try garage.indexes().count == 3)
    }

    /// An SQLITE_SCHEMA that still reaches the garage says what happened, and that trying again
    /// helps: not that the folder or the free space is at fault.
    @Test func aChangedLayoutIsReportedAsSuch() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("layout.garage")
        let garage = try Garage(path: path)
        let error = try garage.store.sqlite.garageError(
            DatabaseError(resultCode: .SQLITE_SCHEMA, message: "no such table: garage_object"), operation: "park Note(n)")
        #expect(error as? GarageError == .storeLayoutChanged(path: path, operation: "park Note(n)"))
        let description = "\(error)"
        #expect(description.contains("Try again"))
        #expect(!description.contains("free space"))
        #expect((error as? GarageError)?.errorCode == 136)
    }
}
