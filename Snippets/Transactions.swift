// Batch changes: autosave off, a transaction begun and ended by separate calls, the way out
// of a save refused because another writer changed an object meanwhile, and a store whose
// commits survive a power cut.

import Foundation
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

// A file store whose every commit survives a power cut: a class model and a struct model,
// parked and read back from synchronous and from `async` code.
final class Account: Codable, Identifiable {
    var id: String
    var balance: Int
    init(id: String, balance: Int) { (self.id, self.balance) = (id, balance) }
}
struct Payment: Codable, Identifiable {
    var id: String
    var amount: Int
}
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("durability-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let path = folder.appendingPathComponent("ledger.sqlite").path
// snippet.show
// snippet.durability
let ledger = try Garage(engine: .sqlite(path: path, durability: .full))
try ledger.park(Account(id: "main", balance: 100))   // on storage before it returns

func record(_ payment: Payment) async throws {
    try await ledger.park(payment)                    // from async code too
}
// snippet.end
// snippet.hide
func amount(of identifier: String) async throws -> Int? {
    try await ledger.retrieve(Payment.self, identifier: identifier)?.amount
}
try await record(Payment(id: "p1", amount: 25))
let account = try ledger.retrieve(Account.self, identifier: "main")
print(account?.balance ?? -1, try await amount(of: "p1") ?? -1)   // 100 25
