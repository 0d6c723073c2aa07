import Foundation
import Testing
@testable import GarageLite

// GarageStorage's behaviours on a row whose data was emptied through SQLite below the library
// (GarageStorage's `gs_data` nil). Moved from Compatibility/ (issue 25).

extension GarageStorageAPITests {
    /// A row without data (GarageStorage's `gs_data` nil) is `storageDataIsNil`, naming the object.
    @Test func aRowWithoutDataIsStorageDataIsNil() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.park(Counter(id: 1, value: 1))
        try rawWrite(path, "UPDATE garage_object SET data = ''")
        #expect(throws: GarageError.storageDataIsNil("Counter(1)")) { try garage.retrieve(Counter.self, identifier: 1) }
        #expect(throws: GarageError.storageDataIsNil("Counter(1)")) { try garage.retrieveAll(Counter.self) }
        #expect(try garage.retrieveAllLossy(Counter.self).failures.map { $0.error as? GarageError } == [.storageDataIsNil("Counter(1)")])
    }
}

extension GarageStorageSuiteTests {
    /// Test what happens if a core data object is created, but its `gs_data` never got set.
    /// It is possible for this to happen at runtime if there is a memory corruption around the time the object is being parked.
    @Test("Retrieve fails when gs_data is not set")
    func storageDataIsNilFromRetrieve() async throws {
        // On SQLite, whatever engine the suite runs on: the row is changed in the file below.
        let garage = try Garage(path: directory.path("storageDataIsNilFromRetrieve.sqlite"))
        garage.compatibility = .garageStorage

        do {
            // Port: GarageStorage's internal makeCoreDataObject (@testable) made a row without
            // gs_data; here the row is parked, then its data emptied in the file.
            _ = try await garage.park(TestCoreData(), identifier: "TestIdentifier")
            try SQLiteFile(try #require(garage.path)).execute("UPDATE garage_object SET data = '' WHERE type = 'TestCoreData'")
        }

        do {
            let _: TestCoreData? = try await garage.retrieve(TestCoreData.self, identifier: "TestIdentifier") // Port: await (async overload)
            // If we reach here without throwing, the test should fail
            Issue.record("Expected retrieve to throw GarageError.storageDataIsNil")
        } catch GarageError.storageDataIsNil {
            // Expected
        } catch {
            // we want to catch the error, and verify it
            Issue.record("Expected retrieve to throw GarageError.storageDataIsNil, but it threw \(error)")
        }
    }
}
