import Foundation
import GarageLite
import Testing

/// Issue 24: GarageStorage's own Swift Testing suite (mrlegowatch/GarageStorageSwift,
/// Tests/GarageStorageTests: SwiftCodableTests, SwiftGarageTests, SwiftDateTests,
/// SwiftSyncableTests, SwiftErrorTests, TestableEdgeCaseTests), run against GarageLite with the
/// edits the README's migration guide allows: `import GarageLite`, and the construction
/// (`makeTestGarage` opens a file in a temporary directory and sets
/// `garage.compatibility = .garageStorage`). Its models and mocks are in
/// Support/GarageStorageSuiteModels.swift.
///
/// Every other edit is marked `// Port:` and says why: a GarageStorage call that does not throw
/// and throws here takes `try` (inside a closure that can't throw, a `do`/`catch` that records
/// the error), and the tests that read Core Data's internals read the SQLite row instead.
/// `hashableParkAndDelete` is a known issue (the README: a `Hashable` object's identifier is
/// its content's SHA-256, not its `hashValue`).
///
/// Not ported, needing the Objective-C runtime (`MappableObject`, `parkObject`): all of
/// MappableObjectTests, SwiftMigrationTests (`oneMappable`, `nestedMappable`, which migrate
/// `ObjCPerson` objects) and TestableEdgeCaseTests' `arrayOfArray` (`InfiniteBag`),
/// `syncableAnonymous` (`ObjCSyncingAddress`) and `missingIdentifiable` (`ObjCFox`). Not ported,
/// testing GarageStorage's internals with no GarageLite counterpart: `badTransformable`
/// (`Property.transformableType`, `Date(from:)`) and `dateFormatter` (`Date.isoString`,
/// `Date.isoDate(for:)`). BootstrapTests checks that the Documents directory exists, which
/// Core Data's store needs and GarageLite does not use.
@Suite("GarageStorage's own tests, ported")
struct GarageStorageSuiteTests {
    /// Where this test's garages are: GarageStorage's were in memory, one per test.
    let directory: TemporaryDirectory

    init() throws {
        TestSetup.classSetUp()
        directory = try TemporaryDirectory()
    }

    /// GarageStorage's `makeTestGarage` (TestSetup.swift), with GarageLite's construction: a
    /// store file per test in this test's directory, under GarageStorage's rules.
    func makeTestGarage(_ name: String = #function) -> Garage {
        // GarageStorage's never fails (it printed errors); opening a new file in a new directory doesn't either.
        let garage = try! TestEngine.garage(path: directory.path("\(name).sqlite"))
        garage.compatibility = .garageStorage
        return garage
    }

    // MARK: - SwiftCodableTests

    @Test("Identifiable objects can be parked and retrieved")
    func identifiable() throws {
        let garage = makeTestGarage()

        // Create a "Sam" person and park it.
        let sam = swiftPerson()
        try garage.park(sam)

        // Retrieve the "Sam" person.
        let retrievedSam = try #require(try garage.retrieve(SwiftPerson.self, identifier: "Sam"))
        #expect(retrievedSam.name == "Sam", "expected Sam to be Sam")
        #expect(retrievedSam.importantDates.count == 3, "expected 3 important dates")

        // Make sure brother and siblings worked out.
        let brother = retrievedSam.brother
        #expect(brother != nil, "O brother, my brother")
        #expect(brother?.name == "Nick", "expected brother to be Nick")
        #expect(retrievedSam.siblings.count == 2, "expected 2 siblings")
    }

    @Test("Mappable with Identifiable non-string identifiers work correctly")
    func mappableNonString() throws {
        let garage = makeTestGarage()

        // Create a "Peaches" pet and park it.
        let pet = swiftPet()
        let pet2 = swiftPet2()
        try garage.parkAll([pet, pet2])

        // Retrieve each pet by identifier.
        let retrievedPet = try #require(try garage.retrieve(SwiftPet.self, identifier: 3))
        #expect(retrievedPet.name == "Peaches", "expected Peaches")

        let retrievedPet2 = try #require(try garage.retrieve(SwiftPet.self, identifier: 5))
        #expect(retrievedPet2.name == "Cream", "expected Cream")

        #expect(retrievedPet != retrievedPet2, "expected different pets")

        let retrievedPet3 = try #require(try garage.retrieve(SwiftPet.self, identifier: 3))
        #expect(retrievedPet == retrievedPet3, "expected separate fetches to return equivalent objects")
    }

    @Test("Array of identifiable objects can be parked")
    func arrayOfIdentifiable() throws {
        let garage = makeTestGarage()

        // Create a pair of people and park them.
        let nick = swiftPerson2()
        let emily = swiftPerson3()
        try garage.parkAll([nick, emily])

        // Retrieve each person.
        let retrievedNick = try #require(try garage.retrieve(SwiftPerson.self, identifier: "Nick"))
        #expect(retrievedNick.name == "Nick", "Failed to retrieve 'Nick' from garage store")

        let retrievedEmily = try #require(try garage.retrieve(SwiftPerson.self, identifier: "Emily"))
        #expect(retrievedEmily.name == "Emily", "Failed to retrieve 'Emily' from garage store")

        let sam = try? garage.retrieve(SwiftPerson.self, identifier: "Sam")
        #expect(sam == nil, "Should not have been able to retrieve 'Sam' from garage store")
    }

    @Test("Retrieving collections of different types")
    func retrievingCollections() throws {
        let garage = makeTestGarage()

        // Park heterogeneous objects
        let sam = swiftPerson()
        let nick = swiftPerson2()
        let emily = swiftPerson3()

        let oldAddress = swiftAddress()
        let newAddress = swiftAddress2()
        // Swift strong type checking needs arrays to be homogeneous, and therefore separately parked
        try garage.parkAll([nick, emily, sam])
        try garage.parkAll([oldAddress, newAddress])

        // Retrieve persons
        let people = try garage.retrieveAll(SwiftPerson.self)
        #expect(people.count == 3, "Number of Persons didn't match")

        // Check that everybody is there
        var names = ["Sam", "Nick", "Emily"]
        for person in people {
            names.removeAll { person.name == $0 }
        }
        #expect(names.count == 0, "should have found all 3 people")

        // Retrieve Addresses
        let addresses = try garage.retrieveAll(SwiftAddress.self)
        #expect(addresses.count == 2, "Number of Addresses didn't match")
    }

    @Test("Deleting a single object")
    func deletingObject() throws {
        let garage = makeTestGarage()

        // Park heterogeneous objects
        let sam = swiftPerson()
        let nick = swiftPerson2()
        let emily = swiftPerson3()

        try garage.parkAll([nick, emily, sam])

        // Delete a person
        let nickToDelete = try #require(try garage.retrieve(SwiftPerson.self, identifier: "Nick"))
        try garage.delete(nickToDelete)

        // Confirm that the person has been deleted
        let retrievedNick = try? garage.retrieve(SwiftPerson.self, identifier: "Nick")
        #expect(retrievedNick == nil, "Nick should be gone")
    }

    @Test("Deleting collections by type")
    func deletingCollections() throws {
        let garage = makeTestGarage()

        // Park heterogeneous objects
        let sam = swiftPerson()
        let nick = swiftPerson2()
        let emily = swiftPerson3()

        let oldAddress = swiftAddress()
        let newAddress = swiftAddress2()
        try garage.parkAll([nick, emily, sam])
        try garage.parkAll([oldAddress, newAddress])

        // Delete persons
        try garage.deleteAll(SwiftPerson.self) // Port: deleteAll throws

        // Confirm that there are no persons
        let persons = try garage.retrieveAll(SwiftPerson.self)
        #expect(persons.count == 0, "Should not be any Persons")

        let addresses = try garage.retrieveAll(SwiftAddress.self)
        #expect(addresses.count == 2, "Should have 2 Addresses")
        #expect(addresses[0].city == "Boston", "all addresses should be based in Boston")
    }

    @Test("Identifiable references are preserved")
    func identifiableReferences() throws {
        let garage = makeTestGarage()

        // Configure a tree consisting of lots of referenced branches
        let topBranch = SwiftBranch(name: "Top")
        let upperBranch = SwiftBranch(name: "Upper")
        let lowerBranch = SwiftBranch(name: "Lower")
        let bottomBranch = SwiftBranch(name: "Bottom")

        // Careful with structs! Once rightBranch goes into leftBranch's branches, changing rightBranch's branches does not affect the one that went into leftBranch.
        // Use references when you mean to use them.
        var rightBranch = SwiftBranch(name: "Right")
        rightBranch.branches = [lowerBranch, bottomBranch]
        var leftBranch = SwiftBranch(name: "Left")
        leftBranch.branches = [upperBranch, rightBranch, topBranch]

        let tree = SwiftTree(name: "Tree", mainBranch: leftBranch)

        // Note that we only need to park the toplevel object, the rest are parked for free.
        try garage.park(tree)

        let retrievedTree = try #require(try garage.retrieve(SwiftTree.self, identifier: "Tree"))

        let leftBranchRetrieved = try #require(try garage.retrieve(SwiftBranch.self, identifier: "Left"))

        #expect(retrievedTree.mainBranch.branches.count == 3, "Should have 3 branches")
        #expect(retrievedTree.mainBranch == leftBranchRetrieved, "Should be equal")

        let rightBranchRetrieved = try #require(try garage.retrieve(SwiftBranch.self, identifier: "Right"))
        #expect(rightBranchRetrieved.branches.count == 2, "Should have 2 branches")
    }

    @Test("Retrieving non-existent object returns nil")
    func nonExistentObject() throws {
        let garage = makeTestGarage()

        let frodo = try? garage.retrieve(SwiftPerson.self, identifier: "Frodo")
        #expect(frodo == nil, "Should be nil")
    }

    @Test("Identifiable can be encoded to pure JSON")
    func pureSwiftCodable() throws {
        // No garage

        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        let sam = swiftPerson()
        let data = try encoder.encode(sam)

        let decoder = JSONDecoder()
        let decodedSam = try decoder.decode(SwiftPerson.self, from: data)
        #expect(decodedSam.name == "Sam", "name")
        #expect(decodedSam.address == swiftAddress(), "address")
        #expect(decodedSam.brother != nil, "brother")
        #expect(decodedSam.siblings.count == 2, "siblings")
    }

    @Test("Identifiable with non-optional reference can be encoded to pure JSON")
    func pureSwiftCodableWithNonOptionalReference() throws {
        // No garage - this tests the decodeDefault code path

        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted

        // Create a person with a non-optional parent reference
        let child = swiftPersonWithParent()

        let data = try encoder.encode(child)

        let decoder = JSONDecoder()
        let decodedChild = try decoder.decode(SwiftPersonWithParent.self, from: data)
        #expect(decodedChild.name == "Child", "child name")
        #expect(decodedChild.parent.name == "Nick", "parent name")
        #expect(decodedChild.parent.age == 26, "parent age")
    }

    /// Expected to differ (the README's "Differences from GarageStorage", `Hashable` identity,
    /// and its symbol table, `retrieve`): a `Hashable` object's identifier is the SHA-256 of its
    /// content, stable across processes, not its `hashValue`, which Swift seeds per process;
    /// `retrieve` by a `hashValue` throws `contentIdentifierExpected` (`identifier(for:)` gives
    /// the identifier). Parking and deleting by the object work as in GarageStorage.
    @Test("Hashable park and delete")
    func hashableParkAndDelete() throws {
        withKnownIssue("A Hashable object is stored under its content's SHA-256, not its hashValue (README: Hashable identity)") {
        let garage = makeTestGarage()

        // Create and park addresses using Hashable methods
        let address1 = swiftAddress()
        let address2 = swiftAddress2()
        try garage.park(address1)
        try garage.park(address2)

        // Retrieve addresses using their hashValue
        let retrievedAddress1 = try #require(try garage.retrieve(SwiftAddress.self, identifier: address1.hashValue))
        #expect(retrievedAddress1.street == "330 Congress St.", "expected street to match")
        #expect(retrievedAddress1.city == "Boston", "expected city to match")
        #expect(retrievedAddress1.zip == "02140", "expected zip to match")

        let retrievedAddress2 = try #require(try garage.retrieve(SwiftAddress.self, identifier: address2.hashValue))
        #expect(retrievedAddress2.street == "321 Summer Street", "expected street to match")

        // Delete first address using Hashable delete method
        try garage.delete(address1)

        // Confirm first address is deleted
        let deletedAddress = try? garage.retrieve(SwiftAddress.self, identifier: address1.hashValue)
        #expect(deletedAddress == nil, "First address should be deleted")

        // Confirm second address still exists
        let stillExistingAddress = try #require(try garage.retrieve(SwiftAddress.self, identifier: address2.hashValue))
        #expect(stillExistingAddress == address2, "Second address should still exist")

        // Delete second address
        try garage.delete(address2)

        // Confirm both addresses are now deleted
        let allAddresses = try garage.retrieveAll(SwiftAddress.self)
        #expect(allAddresses.count == 0, "All addresses should be deleted")
        }
    }

    @Test("Identifiable and Hashable park and retrieve")
    func identifiableAndHashable() throws {
        let garage = makeTestGarage()

        let squirrels = swiftSquirrels()
        let squirrelCount = squirrels.count

        // Park the objects twice, they should only be saved once.
        try garage.parkAll(squirrels)
        try garage.parkAll(squirrels)

        let retrievedSquirrels: [SwiftSquirrel] = try garage.retrieveAll(SwiftSquirrel.self)
        #expect(retrievedSquirrels.count == squirrelCount)
    }

    // MARK: - SwiftGarageTests

    @Test("Convenience initializer creates garage with named store")
    func convenienceInitializer() throws {
        // Port: Garage(named:) in a temporary application support directory, one test at a time
        // (on Linux it is $XDG_DATA_HOME, the process's environment).
        try withTemporaryApplicationSupportDirectory { _ in
        // Use the convenience initializer that creates a garage with a named store
        let garage = try Garage(named: "GarageStorageTests/ConvenienceInitializer")
        garage.compatibility = .garageStorage

        // Verify the garage is functional by parking and retrieving an object
        let sam = swiftPerson()
        try garage.park(sam)

        let retrievedSam = try #require(try garage.retrieve(SwiftPerson.self, identifier: "Sam"))
        #expect(retrievedSam.name == "Sam", "Expected Sam to be Sam")
        #expect(retrievedSam.importantDates.count == 3, "Expected 3 important dates")

        // Clean up
        try garage.deleteAllObjects() // Port: deleteAllObjects throws
        }
    }

    @Test("Autosave disabled requires manual save")
    func autosaveDisabled() throws {
        let garage = makeTestGarage()

        // Verify autosave is enabled by default
        #expect(garage.isAutosaveEnabled == true, "Autosave should be enabled by default")

        // Create and park people using withAutosaveDisabled
        try garage.withAutosaveDisabled {
            let nick = swiftPerson2()
            let emily = swiftPerson3()
            try garage.park(nick)
            try garage.park(emily)
        }

        // Verify autosave is re-enabled after the closure
        #expect(garage.isAutosaveEnabled == true, "Autosave should be re-enabled after closure")

        // Now manually save the garage
        try garage.save() // Port: save throws

        // Retrieve the objects to verify they were saved
        let retrievedNick = try? garage.retrieve(SwiftPerson.self, identifier: "Nick")
        #expect(retrievedNick != nil, "Object should be retrievable after manual save")
        #expect(retrievedNick?.name == "Nick", "Retrieved object should have correct name")

        let retrievedEmily = try? garage.retrieve(SwiftPerson.self, identifier: "Emily")
        #expect(retrievedEmily != nil, "Emily should be retrievable after manual save")
        #expect(retrievedEmily?.name == "Emily", "Retrieved Emily should have correct name")
    }

    @Test("Deleting all objects from garage")
    func deletingAllObjects() async throws {
        let garage = makeTestGarage()

        // Park heterogeneous objects
        let sam = swiftPerson()
        let nick = swiftPerson2()
        let emily = swiftPerson3()

        let oldAddress = swiftAddress()
        let newAddress = swiftAddress2()
        // Port: await, here and below in async tests: GarageLite's async overloads share the
        // names, and Swift calls them in an async function.
        try await garage.parkAll([nick, emily, sam])
        try await garage.parkAll([oldAddress, newAddress])

        await withCheckedContinuation { continuation in
            // Delete everything
            do { // Port: deleteAllObjects(completion:) throws; its error is recorded, and ends the wait
            try garage.deleteAllObjects {
                // Confirm that there are no persons
                do {
                    let persons = try garage.retrieveAll(SwiftPerson.self)
                    #expect(persons.count == 0, "Should not be any Persons")

                    let addresses = try garage.retrieveAll(SwiftAddress.self)
                    #expect(addresses.count == 0, "Should not be any Addresses")
                } catch {
                    Issue.record("Unexpected error: \(error)")
                }

                // Delete everything again (hits the no-op case, for code coverage)
                do { // Port: deleteAll and deleteAllObjects throw, in a completion that can't
                    try garage.deleteAll(SwiftPerson.self)
                    try garage.deleteAllObjects()
                } catch {
                    Issue.record("Unexpected error: \(error)")
                }

                continuation.resume()
            }
            } catch {
                Issue.record("Unexpected error: \(error)")
                continuation.resume()
            }
        }
    }

    @Test("Back-to-back deleteAllObjects calls for code coverage")
    func backToBackDeleteAllObjects() async throws {
        let garage = makeTestGarage()

        // Park three SwiftPerson objects
        let sam = swiftPerson()
        let nick = swiftPerson2()
        let emily = swiftPerson3()
        try await garage.parkAll([sam, nick, emily]) // Port: await (async overload)

        // Verify all three are parked
        let allPeople = try await garage.retrieveAll(SwiftPerson.self)
        #expect(allPeople.count == 3, "Should have 3 people parked")

        // First deleteAllObjects call with completion handler
        await withCheckedContinuation { continuation in
            do { // Port: deleteAllObjects throws; its error is recorded, and ends the wait
            try garage.deleteAllObjects()
            try garage.deleteAllObjects {
                continuation.resume()
            }
            } catch {
                Issue.record("Unexpected error: \(error)")
                continuation.resume()
            }
        }

        // Verify all objects are deleted
        let peopleAfterFirstDelete = try await garage.retrieveAll(SwiftPerson.self)
        #expect(peopleAfterFirstDelete.count == 0, "Should have no people after first delete")

        // Third deleteAllObjects call for additional coverage
        try await garage.deleteAllObjects() // Port: deleteAllObjects throws; await (async overload)

        // Give it a moment to complete
        try await Task.sleep(for: .milliseconds(100))

        // Final verification
        let peopleAfterThirdDelete = try await garage.retrieveAll(SwiftPerson.self)
        #expect(peopleAfterThirdDelete.count == 0, "Should still have no people after third delete")
    }

    // MARK: - SwiftDateTests

    @Test("Date encoding and decoding")
    func dates() throws {
        let garage = makeTestGarage()

        let sam = swiftPerson()

        // Set sam's birthdate to 1950/01/01 04:00:00
        let timeZone = TestSetup.timeZone
        var dateComponents = DateComponents()
        dateComponents.day = 1
        dateComponents.month = 1
        dateComponents.year = 1950
        dateComponents.timeZone = timeZone

        var calendar = Calendar.current
        calendar.timeZone = timeZone
        sam.birthdate = calendar.date(from: dateComponents)!
        #expect(sam.birthdate.timeIntervalSinceReferenceDate == -1609459200.0, "Making assumption about the test")

        try garage.park(sam)

        let retrievedSam = try #require(try garage.retrieve(SwiftPerson.self, identifier: "Sam"))
        #expect(retrievedSam.birthdate.timeIntervalSinceReferenceDate == -1609459200.0, "Reconstituted date failed")
    }

    @Test("Date encoding and decoding strategies can be temporarily changed")
    func temporaryDateStrategies() throws {
        let garage = makeTestGarage()

        // Create a person with a specific birthdate and time
        let nick = swiftPerson2()
        let timeZone = TestSetup.timeZone
        var dateComponents = DateComponents()
        dateComponents.day = 15
        dateComponents.month = 6
        dateComponents.year = 1985
        dateComponents.hour = 12
        dateComponents.minute = 30
        dateComponents.timeZone = timeZone

        var calendar = Calendar.current
        calendar.timeZone = timeZone
        let nickBirthdate = calendar.date(from: dateComponents)!
        nick.birthdate = nickBirthdate

        // Create a simple date formatter for testing that doesn't include time
        let simpleDateFormatter = DateFormatter()
        simpleDateFormatter.dateFormat = "yyyy-MM-dd"
        simpleDateFormatter.timeZone = timeZone

        // Test both strategies together: Park with formatted strategy
        try garage.withDateEncodingStrategy(.formatted(simpleDateFormatter)) {
            try garage.park(nick)
        }

        // Retrieve with a matching decoding strategy
        let retrievedNick = try garage.withDateDecodingStrategy(.formatted(simpleDateFormatter)) {
            try garage.retrieve(SwiftPerson.self, identifier: "Nick")
        }
        let unwrappedNick = try #require(retrievedNick)

        // initial Date includes time, unwrapped Date no longer includes time, so they should be different.
        #expect(nick.birthdate != unwrappedNick.birthdate, "Dates should not match, unwrappedNick should have no time")

        // Note: Time components will be lost with the simple formatter
        let nickDateOnly = calendar.date(from: calendar.dateComponents([.year, .month, .day], from: nickBirthdate))!
        let retrievedDateOnly = calendar.date(from: calendar.dateComponents([.year, .month, .day], from: unwrappedNick.birthdate))!
        #expect(nickDateOnly == retrievedDateOnly, "Date (without time) should match")

        // Negative test: if encoded using non-default format, but decoded without the non-default format, ensure that decoding might fail.
        do {
            _ = try garage.retrieve(SwiftPerson.self, identifier: "Nick")
            // If we reach here without throwing, the test should fail
            Issue.record("Expected retrieve to throw DecodingError.dataCorrupted")
        } catch DecodingError.dataCorrupted {
            // Expected
        } catch {
            Issue.record("Expected retrieve to throw DecodingError.dataCorrupted")
        }

        // Ensure that deletion doesn't rely on either encoding or decoding.
        try garage.delete(nick)
    }

    // MARK: - SwiftSyncableTests

    @Test("Managing sync status of objects")
    func syncStatus() throws {
        let garage = makeTestGarage()

        let sam = swiftPerson()
        let nick = swiftPerson2()
        let emily = swiftPerson3()

        let oldAddress = swiftAddress()
        let newAddress = swiftAddress2()

        let pet = swiftPet()

        // Park heterogeneous objects
        try garage.parkAll([nick, emily, sam])
        try garage.parkAll([oldAddress, newAddress])
        try garage.parkAll([pet])

        // Validate sync status of Persons
        // WARNING: This will succeed by accident, because there is only one object of type SwiftPerson syncing,
        // but if there was another object of a different type syncing, then this would fail.
        // Use retrieveAll(_ objectClass: T, withStatus: SyncStatus) instead to focus on the specific type.
        let syncing: [SwiftPerson] = try garage.retrieveAll(withStatus: .syncing)

        #expect(syncing.count == 1, "1 item should be syncing")

        // This is the correct way to fetch all of a specific type that are not synced
        let notSynced: [SwiftPerson] = try garage.retrieveAll(SwiftPerson.self, withStatus: .notSynced)
        #expect(notSynced.count == 0, "no items should be not synced")

        // Change Sam's sync status and validate that it changed
        try garage.setSyncStatus(.notSynced, for: sam)

        // Add in an unrelated object type, to ensure that retrieveAll below works on just one type
        try garage.setSyncStatus(.notSynced, for: pet)

        let syncingAfterChange: [SwiftPerson] = try garage.retrieveAll(SwiftPerson.self, withStatus: .syncing)
        #expect(syncingAfterChange.count == 0, "no items should be syncing")

        let notSyncedAfterChange: [SwiftPerson] = try garage.retrieveAll(SwiftPerson.self, withStatus: .notSynced)
        #expect(notSyncedAfterChange.count == 1, "1 item should be not synced")

        // Test setting sync status for a collection
        try garage.setSyncStatus(.undetermined, for: [nick, sam])
        let nickStatus = try garage.syncStatus(for: nick)
        #expect(nickStatus == .undetermined, "Nick should have undetermined sync status")
    }

    @Test("Setting sync status for unparked object throws error")
    func invalidSyncStatus() throws {
        let garage = makeTestGarage()

        // Create, but don't park, sam
        let sam = swiftPerson()

        // Verify that setting sync status on an unparked object throws an error
        #expect(throws: Error.self) {
            try garage.setSyncStatus(.notSynced, for: sam)
        }

        #expect(throws: Error.self) {
            try garage.setSyncStatus(.notSynced, for: [sam])
        }
    }

    // MARK: - SwiftErrorTests

    @Test("Garage.errorDomain matches GarageError.errorDomain")
    func garageErrorDomainCompatibility() {
        #expect(Garage.errorDomain == GarageError.errorDomain)
        #expect(Garage.errorDomain == "GarageStorage")
    }

    @Test("GarageError converts to NSError with correct domain")
    func nsErrorDomain() {
        let error = GarageError.failedToRetrieveObject("TestType", "test-id")
        let nsError = error as NSError

        #expect(nsError.domain == "GarageStorage")
    }

    @Test("failedToRetrieveObject error has correct userInfo")
    func failedToRetrieveObjectUserInfo() {
        let error = GarageError.failedToRetrieveObject("SwiftPerson", "Sam")

        let userInfo = error.errorUserInfo
        let description = userInfo[NSLocalizedDescriptionKey] as? String

        #expect(description != nil)
        #expect(description?.contains("SwiftPerson") == true)
        #expect(description?.contains("Sam") == true)
        #expect(description == "Failed to retrieve object of type: SwiftPerson with identifier: Sam")
    }

    @Test("failedToRetrieveObject NSError has localized description")
    func failedToRetrieveObjectNSError() {
        let error = GarageError.failedToRetrieveObject("SwiftPerson", "Sam")
        let nsError = error as NSError

        #expect(nsError.localizedDescription.contains("SwiftPerson"))
        #expect(nsError.localizedDescription.contains("Sam"))
    }

    @Test("storageDataIsNil error has correct userInfo")
    func storageDataIsNilUserInfo() {
        let error = GarageError.storageDataIsNil("SwiftPerson")

        let userInfo = error.errorUserInfo
        let description = userInfo[NSLocalizedDescriptionKey] as? String

        #expect(description != nil)
        #expect(description?.contains("SwiftPerson") == true)
        #expect(description?.contains("gsData is nil") == true)
        #expect(description == "CoreDataObject.gsData is nil for type: SwiftPerson")
    }

    @Test("storageDataIsNil NSError has localized description")
    func storageDataIsNilNSError() {
        let error = GarageError.storageDataIsNil("SwiftPerson")
        let nsError = error as NSError

        #expect(nsError.localizedDescription.contains("SwiftPerson"))
        #expect(nsError.localizedDescription.contains("gsData is nil"))
    }

    @Test("storageDataIsNil from retrieve")
    func failedToRetrieveFromDelete() {
        let garage = makeTestGarage()
        let sam = swiftPerson()

        do {
            try garage.delete(sam)
            Issue.record("delete should have thrown GarageError.failedToRetrieveObject")
        } catch GarageError.failedToRetrieveObject {
            // YAY
        } catch {
            Issue.record("delete should have thrown GarageError.failedToRetrieveObject")
        }
    }

    @Test("Missing required Identifiable reference throws DecodingError.dataCorrupted")
    func missingRequiredIdentifiableReference() throws {
        let garage = makeTestGarage()

        // Create a person with a parent reference
        let child = swiftPersonWithParent()
        try garage.park(child)

        // Verify the parent was parked
        let parent = try #require(try garage.retrieve(SwiftPerson.self, identifier: "Nick"))

        // Delete the parent to create a missing reference
        try garage.delete(parent)

        // Attempting to retrieve child should throw because parent reference is missing
        do {
            _ = try garage.retrieve(SwiftPersonWithParent.self, identifier: "Child")
            Issue.record("Expected retrieve to throw DecodingError.dataCorrupted")
        } catch DecodingError.dataCorrupted(let context) {
            // Expected error - verify it mentions missing reference
            #expect(context.debugDescription.contains("Missing Identifiable reference"))
            #expect(context.debugDescription.contains("SwiftPerson"))
            #expect(context.debugDescription.contains("Nick"))
        } catch {
            Issue.record("Expected DecodingError.dataCorrupted, got: \(error)")
        }
    }

    @Test("Missing Identifiable reference in array throws DecodingError.dataCorrupted")
    func missingIdentifiableReferenceInArray() throws {
        let garage = makeTestGarage()

        // Create a person with siblings (array of references)
        let sam = swiftPerson()
        try garage.park(sam)

        // Verify siblings were parked
        #expect(sam.siblings.count == 2)
        let nick = try #require(try garage.retrieve(SwiftPerson.self, identifier: "Nick"))

        // Delete one sibling to create a missing reference in the array
        try garage.delete(nick)

        // Attempting to retrieve Sam should throw because a sibling reference is missing
        do {
            _ = try garage.retrieve(SwiftPerson.self, identifier: "Sam")
            Issue.record("Expected retrieve to throw DecodingError.dataCorrupted")
        } catch DecodingError.dataCorrupted(let context) {
            // Expected error - verify it mentions missing reference
            #expect(context.debugDescription.contains("Missing Identifiable reference"))
            #expect(context.debugDescription.contains("Nick"))
        } catch {
            Issue.record("Expected DecodingError.dataCorrupted, got: \(error)")
        }
    }

    // MARK: - TestableEdgeCaseTests

    @Test("Custom encryptor encrypts data differently than unencrypted storage")
    func customEncryptor() async throws {
        // Port: two stores in this test's directory, in place of Core Data store descriptions
        // and loadPersistentStores.
        let encryptor = CustomDataEncryptor()
        let garage = try TestEngine.garage(path: directory.path("CustomEncryptorGarage.sqlite"))
        garage.compatibility = .garageStorage
        garage.dataEncryptionDelegate = encryptor

        let unencryptedGarage = try TestEngine.garage(path: directory.path("NoEncryptorGarage.sqlite"))
        unencryptedGarage.compatibility = .garageStorage

        do {
            let sam = swiftPerson()
            // In Swift Testing, we verify that operations don't throw by not catching
            try await garage.park(sam) // Port: await (async overload)
            try await unencryptedGarage.park(sam)

            let className = String(describing: type(of: sam))

            // Port: each store's stored text for Sam, read from its file, in place of
            // GarageStorage's internal fetchObject(for:identifier:) and gs_data: the record of
            // a garage opened on the file without a delegate holds the data as stored.
            func storedData(_ name: String) throws -> String? {
                try TestEngine.garage(path: directory.path(name)).record(ObjectKey(typeName: className, identifier: "Sam"))?.json
            }
            guard let encryptedString = try storedData("CustomEncryptorGarage.sqlite"),
                let unencryptedString = try storedData("NoEncryptorGarage.sqlite") else {
                    Issue.record("Failed to encode data, bailing test")
                    return
            }
            #expect(encryptedString != unencryptedString, "should not match")
        }
    }
}
