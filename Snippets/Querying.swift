// Queries: the notes app's questions — notes with a tag, a notebook's notes by title, the notes
// of shared notebooks, the most recently edited, a search of their words, how many are left to
// sync — answered by the store, not by a filter in memory.

import Foundation
import GarageLite

// snippet.hide
struct Notebook: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var shared = false
}

struct Note: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var title: String
    var body = ""
    var notebook: Notebook
    var tags: [String] = []
    var pinned = false
    var due: Date?
    var syncStatus: SyncStatus = .notSynced
}
let garage = try Garage.inMemory()
let home = Notebook(id: "home", name: "Home"), office = Notebook(id: "work", name: "Work", shared: true)
try garage.parkAll([
    Note(id: "n1", title: "Groceries", body: "milk, bread and eggs", notebook: home, tags: ["errands"]),
    Note(id: "n2", title: "Quarterly report", body: "numbers", notebook: office, tags: ["work", "urgent"], pinned: true,
         due: Date().addingTimeInterval(86_400)),
    Note(id: "n3", title: "Standup notes", body: "milk for the office", notebook: office, tags: ["work"]),
])
// snippet.show
// snippet.querying
let urgent = try garage.retrieve(Query(Note.self).filter(Field("tags").contains("urgent")))

let work = Query(Note.self)
    .filter(Field("notebook") == "work" && !(Field("pinned") == true))   // a reference: its identifier
    .sorted(by: Field("title"))
let workNotes = try garage.retrieve(work)                 // whole objects, in title order

let shared = try garage.retrieve(Query(Note.self)
    .filter(Field("notebook").references(Notebook.self, where: Field("shared") == true)))
let dueSoon = try garage.count(Query(Note.self).filter(Field("due") < Date().addingTimeInterval(7 * 86_400)))
let recent = try garage.retrieve(Query(Note.self).sortedByModificationDate(.descending).limit(20))
let toUpload = try garage.count(Query(Note.self).filter(.syncStatus(.notSynced)))

try garage.index(Note.self, on: Field("notebook"), Field("title"))   // `work` reads it, in order
try garage.textIndex(Note.self, on: Field("title"), Field("body"))
let milk = try garage.retrieve(Query(Note.self).search("milk bre*").limit(20))   // most relevant first
// snippet.end
// snippet.hide
precondition(urgent.map(\.id) == ["n2"])
precondition(workNotes.map(\.id) == ["n3"])
precondition(shared.map(\.id) == ["n2", "n3"] && dueSoon == 1)
precondition(recent.count == 3 && toUpload == 3)
precondition(milk.map(\.id) == ["n1"])
let again = try garage.retrieve(work)
precondition(again.map(\.id) == ["n3"])

// A mistake is an error at the query's first use, never an empty result.
do {
    _ = try garage.retrieve(Query(Note.self).filter(Field("titel") == "Groceries"))
    preconditionFailure("a misspelled property is refused")
} catch GarageError.invalidQuery(_, _, let reason) {
    precondition(reason.contains("titel"))
}
// snippet.show
