// Batch changes: autosave off, a transaction begun and ended by separate calls, and the way out
// of a save refused because another writer changed an object meanwhile.

import GarageLite

// snippet.hide
struct Person: Mappable {
    var id: String
}
struct Note: Mappable, Revisioned {
    var id: String
    var title: String
    var revision: Int64 = 0
}
let garage = try Garage.inMemory()
let people = [Person(id: "Sam"), Person(id: "Max")]
let person = Person(id: "Ann")
let editedTitle = "Groceries, again"
// snippet.show
// snippet.autosave
garage.isAutosaveEnabled = false
try garage.parkAll(people)
try garage.save()                 // one transaction
// or: garage.discardUnsavedChanges()
// snippet.end
// snippet.hide
garage.isAutosaveEnabled = true
// snippet.show

// snippet.hide
// An async function, so that `await` picks the async form (top-level code picks the synchronous
// ones). Its body is not indented: the docs show it as it would stand in any function.
@MainActor func addPerson() async throws {
// snippet.show
// snippet.begin
try garage.beginTransaction()
try await garage.park(person)
try await garage.commitTransaction()      // or: try garage.rollbackTransaction()
// snippet.end
// snippet.hide
}
try await addPerson()
// snippet.show
// snippet.hide
var groceries = Note(id: "groceries", title: "Groceries")
try garage.park(&groceries)
garage.isAutosaveEnabled = false
groceries.title = editedTitle
try garage.park(&groceries)
// snippet.show

// snippet.stale
do {
    try garage.save()
} catch GarageError.staleObject(_, let identifier, _, _) {
    try garage.discardUnsavedChanges(of: Note.self, identifier: identifier)
    var note = try garage.retrieve(Note.self, identifier: identifier)!   // the newer version
    note.title = editedTitle                                             // this screen's edit, again
    try garage.park(&note)
    try garage.save()
}
// snippet.end
// snippet.hide
print(try garage.retrieve(Note.self, identifier: "groceries")?.title ?? "-")   // Groceries, again
