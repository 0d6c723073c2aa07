// garage-demo: parks a small graph into ./demo-garage.sqlite, retrieves it, runs a background
// sync job over it, and says what happened.
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

struct SimulatedOutage: Error, CustomStringConvertible {
    var description: String { "the web service did not answer" }
}

let path = FileManager.default.currentDirectoryPath + "/demo-garage.sqlite"

do {
    let garage = try Garage(path: path)

    // Park and retrieve a graph.
    let sam = Person(name: "Sam", address: Address(street: "1 Main St", city: "Springfield"),
                     birthdate: Date(timeIntervalSince1970: 631_152_000))
    let max = Person(name: "Max", birthdate: Date(timeIntervalSince1970: 662_688_000))
    let ada = Person(name: "Ada", birthdate: Date(timeIntervalSince1970: 694_224_000))
    sam.brother = max
    sam.siblings = [max, ada]

    try garage.park(sam)
    print("Parked Sam with his brother and siblings into \(path)")
    print("  rows of type Person: \(try garage.count(Person.self))")

    guard let retrieved = try garage.retrieve(Person.self, identifier: "Sam") else {
        print("Sam was not found")
        exit(1)
    }
    print("Retrieved \(retrieved.name), living in \(retrieved.address?.city ?? "?")")
    print("  brother: \(retrieved.brother?.name ?? "none")")
    print("  siblings: \(retrieved.siblings.map(\.name).joined(separator: ", "))")
    print("  birthdate round-trips exactly: \(retrieved.birthdate == sam.birthdate)")
    print("  not synced yet: \(try garage.identifiers(of: Person.self, withStatus: .notSynced).joined(separator: ", "))")

    // A job that crashed: it claimed a batch and never finished.
    _ = try garage.claim(Person.self, limit: 1)
    print("\nA job claimed one person and crashed; syncing now: \(try garage.count(Person.self, withStatus: .syncing))")

    // The next job run recovers it; its first upload fails, and the batch is released.
    var failing = SyncJob(garage: garage, upload: { _, _ in throw SimulatedOutage() }, batchSize: 2)
    failing.staleAfter = 0   // the demo does not wait 15 minutes for the crashed claim to go stale
    print("Sync job, first run:")
    for line in try failing.run() { print("  \(line)") }

    // The second run succeeds; during its first upload, the app edits Ada.
    var uploaded: [String] = []
    let job = SyncJob(garage: garage, upload: { people, _ in
        uploaded += people.map(\.name)
        if people.contains(where: { $0.name == "Ada" }), uploaded.filter({ $0 == "Ada" }).count == 1 {
            let edited = Person(name: "Ada", birthdate: Date(timeIntervalSince1970: 694_224_001))
            try garage.park(edited)   // the app keeps editing while the job uploads
        }
    }, batchSize: 2)
    print("Sync job, second run:")
    for line in try job.run() { print("  \(line)") }
    print("  uploads, in order: \(uploaded.joined(separator: ", ")) (Ada twice: her edit was not lost)")
    print("  not synced now: \(try garage.count(Person.self, withStatus: .notSynced)), "
        + "synced: \(try garage.count(Person.self, withStatus: .synced))")
    print("\nThe store is at \(path); run again to update it in place.")
} catch {
    print("garage-demo failed: \(error)")
    exit(1)
}
