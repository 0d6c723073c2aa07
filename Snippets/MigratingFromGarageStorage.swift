// Switch an app from GarageStorage: change the import and the construction, and import the
// old store at every launch while its file is there.

// snippet.hide
import Foundation
// snippet.show
// snippet.switch
import GarageLite                                   // was: import GarageStorage

let garage = try Garage(named: "MyGarage")          // was: Garage(named: "MyGarage"); it throws
garage.compatibility = .garageStorage               // only if the app keeps GarageStorage's rules
garage.dataEncryptionDelegate = encryptor           // if it had one: before the import

let documents = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask)[0]
let old = documents.appendingPathComponent("MyGarage.sqlite")
if FileManager.default.fileExists(atPath: old.path) {
    let report = try garage.importGarageStorageStore(at: old)   // one transaction; again: only what it never took
    print(report)       // Imported 1204 objects (Person: 1200, Address: 4); ...
}
// snippet.end

// snippet.hashable
let badges = try garage.retrieveAll(Badge.self)
try garage.transaction {
    try garage.deleteAll(Badge.self)
    try garage.parkAll(badges)          // under their SHA-256 content identifiers
}
// snippet.end

// snippet.hide
/// The app's encryption delegate, if GarageStorage had one.
let encryptor: (any DataEncryptionDelegate)? = nil

/// A `Hashable` object that GarageStorage stored under its `hashValue`.
struct Badge: Codable, Hashable {
    var title: String
}
