import Foundation
import GarageLite

// GarageStorage's own test models and mocks (mrlegowatch/GarageStorageSwift,
// Tests/GarageStorageTests/TestObjects and TestSetup.swift), as its Swift Testing suite
// declares them, for GarageStorageSuiteTests: their names and stored type names (SwiftPerson,
// SwiftAddress, ...) are used by no other test. The declarations are GarageStorage's under
// `import GarageLite`, their comments shortened; TestSetup's `makeTestGarage` is the suite's.

// MARK: - TestSetup

enum TestSetup {
    static let timeZone = TimeZone(identifier: "UTC")!

    /// GarageStorage sets the process's default time zone to UTC, so that tests can compare with
    /// hardcoded UTC dates. Its date tests set their calendar's time zone too, so the port does
    /// not depend on it; the other suites of this process read no local time.
    static func classSetUp() {
        NSTimeZone.default = TestSetup.timeZone
    }
}

// MARK: - Models

// A simple type (struct), stored as a root object by its `Hashable` conformance.
struct SwiftAddress {
    var street: String
    var city: String
    var zip: String
}

extension SwiftAddress: Codable {}

extension SwiftAddress: Hashable {}

// A top-level reference type, Syncable; its address is @Migratable (for GarageStorage's
// migration from ObjCAddress).
class SwiftPerson: Codable, Identifiable, Syncable {
    var id: String { name }

    var name: String = ""

    @Migratable var address: SwiftAddress?
    var age: Int = 0
    var birthdate: Date = Date()
    var importantDates: [Date] = []
    var siblings: [SwiftPerson] = []
    var brother: SwiftPerson?

    // Types with sync status skip syncStatus for coding: the garage keeps it beside the data.
    private enum CodingKeys: String, CodingKey {
        case name
        case address
        case age
        case birthdate
        case importantDates
        case siblings
        case brother
    }

    var syncStatus: SyncStatus = .undetermined
}

// A non-String identifier (Int), round-tripped through LosslessStringConvertible.
class SwiftPet: Mappable, Syncable {
    var id: Int { age }

    var name: String = ""

    var age: Int = 0

    private enum CodingKeys: String, CodingKey {
        case name
        case age
    }

    var syncStatus: SyncStatus = .notSynced
}

extension SwiftPet: Equatable {
    static func == (lhs: SwiftPet, rhs: SwiftPet) -> Bool {
        lhs.id == rhs.id
    }
}

// Multiple Identifiable references.
struct SwiftBranch: Codable, Identifiable {
    var id: String = ""
    var branches: [SwiftBranch] = []

    init(name: String) {
        self.id = name
    }
}

extension SwiftBranch: Equatable {}

class SwiftTree: Codable, Identifiable {
    var id: String = ""
    var mainBranch: SwiftBranch // non-optional, to test required properties.

    init(name: String, mainBranch: SwiftBranch) {
        self.id = name
        self.mainBranch = mainBranch
    }
}

// Every representation at once, to check which conformance wins (Identifiable).
struct SwiftSquirrel {
    var id: String { name }

    var name: String = ""
    var acornCount: Int = 0
}

extension SwiftSquirrel: Codable, Identifiable, Hashable {}

// A non-optional Identifiable property.
class SwiftPersonWithParent: Codable, Identifiable {
    var id: String { name }

    var name: String = ""

    var parent: SwiftPerson = SwiftPerson()
}

// A type whose stored row has no data.
class TestCoreData: Codable {}

// GarageStorage's sample encryptor: it reverses the Base64 text.
final class CustomDataEncryptor: NSObject, DataEncryptionDelegate {
    func encrypt(_ data: Data) throws -> String {
        let string = data.base64EncodedString(options: [])
        return String(string.reversed())
    }

    func decrypt(_ string: String) throws -> Data {
        let reversed = String(string.reversed())
        return Data(base64Encoded: reversed)!
    }
}

// MARK: - Mocks

func swiftAddress() -> SwiftAddress {
    SwiftAddress(street: "330 Congress St.", city: "Boston", zip: "02140")
}

func swiftAddress2() -> SwiftAddress {
    SwiftAddress(street: "321 Summer Street", city: "Boston", zip: "02140")
}

func swiftPerson() -> SwiftPerson {
    let person = SwiftPerson()
    person.name = "Sam"
    person.age = 31
    person.birthdate = Date()
    person.address = swiftAddress()
    person.importantDates = [Date(), Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 100)]
    person.brother = swiftPerson2()
    person.siblings = [person.brother!, swiftPerson3()]
    person.syncStatus = .syncing

    return person
}

func swiftPerson2() -> SwiftPerson {
    let person = SwiftPerson()
    person.name = "Nick"
    person.address = swiftAddress()
    person.age = 26
    return person
}

func swiftPerson3() -> SwiftPerson {
    let person = SwiftPerson()
    person.name = "Emily"
    person.address = swiftAddress()
    person.age = 24
    return person
}

func swiftPet() -> SwiftPet {
    let pet = SwiftPet()
    pet.name = "Peaches"
    pet.age = 3
    return pet
}

func swiftPet2() -> SwiftPet {
    let pet = SwiftPet()
    pet.name = "Cream"
    pet.age = 5
    return pet
}

func swiftSquirrels() -> [SwiftSquirrel] {
    let squirrel1 = SwiftSquirrel(name: "Nutty")
    let squirrel2 = SwiftSquirrel(name: "Benny")
    return [squirrel1, squirrel2]
}

func swiftPersonWithParent() -> SwiftPersonWithParent {
    let person = SwiftPersonWithParent()
    person.name = "Child"
    person.parent = swiftPerson2()
    return person
}
