// The async forms, from a main-actor function, and observing the changes of a type or of one
// object.

import GarageLite

// snippet.hide
final class Person: Mappable {
    var id: String { name }
    var name: String
    init(name: String) { self.name = name }
}
let garage = try Garage.inMemory()
try garage.park(Person(name: "Sam"))
// snippet.show
// snippet.async
@MainActor func rename(_ name: String) async throws {
    guard let sam = try await garage.retrieve(Person.self, identifier: "Sam") else { return }
    try await garage.transaction {
        sam.name = name
        try await garage.park(sam)
        try await garage.delete(Person(name: "Sam"))
    }
}
// snippet.end
// snippet.hide
try await rename("Samuel")
print(try garage.identifiers(of: Person.self))   // ["Samuel"]
if CommandLine.arguments.contains("--watch") {   // runs until interrupted
// snippet.show
// snippet.observe
for await changes in garage.changes(of: Person.self) {      // after each commit
    print(changes)                                          // [parked Person(Sam), ...]
}
for try await sam in try garage.changes(to: Person.self, identifier: "Sam") {
    print(sam?.name ?? "deleted")
}
// snippet.end
// snippet.hide
}
