// Park a graph of objects, retrieve it, and park a value under an identifier of your choice.

// snippet.quickstart
import GarageLite

struct Address: Codable, Hashable {
    var street: String
    var city: String
}

final class Person: Mappable, Syncable {
    var id: String { name }
    var name: String
    var address: Address?          // not Identifiable: stored inline
    var brother: Person?           // Identifiable: its own row, referenced by identifier
    var siblings: [Person] = []
    var syncStatus: SyncStatus = .notSynced
    init(name: String) { self.name = name }
}

let garage = try Garage(named: "People")        // <app support>/People.sqlite

let sam = Person(name: "Sam")
sam.brother = Person(name: "Max")
try garage.park(sam)                             // Sam and Max, in one transaction

let retrieved = try garage.retrieve(Person.self, identifier: "Sam")
print(retrieved?.brother?.name ?? "-")           // Max
try garage.parkAll([Person(name: "Ann"), Person(name: "Bo")])     // several, one transaction
print(try garage.count(Person.self), try garage.count(Person.self, withStatus: .notSynced))  // 4 4
try garage.delete(Person.self, identifier: "Max", rule: .nullify(in: Person.self))  // Sam.brother: nil
try garage.delete(sam)                           // by value; the default rule refuses a referenced one
try garage.forEach(Person.self) { print($0.name) }  // in batches, each from one snapshot
// snippet.end

// snippet.records
try garage.park(Preferences(theme: .dark), identifier: "preferences")
let preferences = try garage.retrieve(Preferences.self, identifier: "preferences")
try garage.delete(Preferences.self, identifier: "preferences")      // true: there was one
// snippet.end

// snippet.hide
/// A value with no identity of its own.
struct Preferences: Codable {
    enum Theme: String, Codable { case light, dark }
    var theme: Theme
}

print(preferences?.theme.rawValue ?? "-")       // dark
