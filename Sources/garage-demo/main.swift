// garage-demo: parks a small graph into ./demo-garage.sqlite, retrieves it, and says what happened.
import Foundation
import GarageLite

struct Address: Codable, Hashable {
    var street: String
    var city: String
}

final class Person: Mappable, Syncable {
    var id: String { name }
    var name: String
    var address: Address?
    var birthdate: Date
    var siblings: [Person] = []
    var brother: Person?
    var syncStatus: SyncStatus = .notSynced

    init(name: String, address: Address? = nil, birthdate: Date) {
        self.name = name
        self.address = address
        self.birthdate = birthdate
    }
}

let path = FileManager.default.currentDirectoryPath + "/demo-garage.sqlite"

do {
    let garage = try Garage(path: path)

    let sam = Person(name: "Sam", address: Address(street: "1 Main St", city: "Springfield"),
                     birthdate: Date(timeIntervalSince1970: 631_152_000))
    let max = Person(name: "Max", birthdate: Date(timeIntervalSince1970: 662_688_000))
    let ada = Person(name: "Ada", birthdate: Date(timeIntervalSince1970: 694_224_000))
    sam.brother = max
    sam.siblings = [max, ada]

    try garage.park(sam)
    print("Parked Sam with his brother and siblings into \(path)")
    print("  rows per type: Person = \(try garage.count(Person.self))")

    guard let retrieved = try garage.retrieve(Person.self, identifier: "Sam") else {
        print("Sam was not found")
        exit(1)
    }
    print("Retrieved \(retrieved.name), living in \(retrieved.address?.city ?? "?")")
    print("  brother: \(retrieved.brother?.name ?? "none")")
    print("  siblings: \(retrieved.siblings.map(\.name).joined(separator: ", "))")
    print("  birthdate round-trips exactly: \(retrieved.birthdate == sam.birthdate)")
    print("  sync status: \(try garage.syncStatus(for: retrieved))")

    let notSynced = try garage.retrieveAll(Person.self, withStatus: .notSynced)
    print("Not synced yet: \(notSynced.map(\.name).sorted().joined(separator: ", "))")
    try garage.setSyncStatus(.synced, for: notSynced)
    print("Marked them synced; not synced now: \(try garage.retrieveAll(Person.self, withStatus: .notSynced).count)")
    print("The store is at \(path); run again to update it in place.")
} catch {
    print("garage-demo failed: \(error)")
    exit(1)
}
