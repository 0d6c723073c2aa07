// Queries: the notes app's questions — notes with a tag, a notebook's notes by title, the most
// recently edited, how many are left to sync — answered by the store, not by a filter in memory.

import GarageLite

// snippet.hide
struct Note: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var title: String
    var notebook: String
    var tags: [String] = []
    var pinned = false
    var syncStatus: SyncStatus = .notSynced
}
let garage = try Garage.inMemory()
try garage.parkAll([
    Note(id: "n1", title: "Groceries", notebook: "Home", tags: ["errands"]),
    Note(id: "n2", title: "Quarterly report", notebook: "Work", tags: ["work", "urgent"], pinned: true),
    Note(id: "n3", title: "Standup notes", notebook: "Work", tags: ["work"]),
])
// snippet.show
// snippet.querying
let urgent = try garage.retrieve(Query(Note.self).filter(Field("tags").contains("urgent")))

let work = Query(Note.self)
    .filter(Field("notebook") == "Work" && !(Field("pinned") == true))
    .sorted(by: Field("title"))
let workNotes = try garage.retrieve(work)                 // whole objects, in title order

let recent = try garage.retrieve(Query(Note.self).sortedByModificationDate(.descending).limit(20))
let toUpload = try garage.count(Query(Note.self).filter(.syncStatus(.notSynced)))
let found = try garage.identifiers(Query(Note.self).filter(Field("title").containsText("REPORT")))
// snippet.end
// snippet.hide
precondition(urgent.map(\.id) == ["n2"])
precondition(workNotes.map(\.id) == ["n3"])
precondition(recent.count == 3 && toUpload == 3 && found == ["n2"])

// A mistake is an error at the query's first use, never an empty result.
do {
    _ = try garage.retrieve(Query(Note.self).filter(Field("titel") == "Groceries"))
    preconditionFailure("a misspelled property is refused")
} catch GarageError.invalidQuery(_, _, let reason) {
    precondition(reason.contains("titel"))
}
// snippet.show
