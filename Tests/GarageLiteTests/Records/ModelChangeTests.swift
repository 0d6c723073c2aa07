import Foundation
import GRDB
@testable import GarageLite
import Testing

/// Version 1 of a note, as an app first stored it.
struct MNoteV1: Codable, Identifiable, Sendable {
    var id: String
    var text: String
    var color: String
}

/// Version 2: two properties added with defaults, one removed (`color`).
struct MNote: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "MNoteV1"
    static let sharesStoredTypeName = true
    var id: String
    var text: String
    @Default<FalseByDefault> var isPinned: Bool
    @Default<EmptyByDefault<[String]>> var tags: [String]
    @Default<ZeroByDefault<Int>> var views: Int
}

/// Issue 13: models that change without migrations.
@Suite("Models that change")
struct ModelChangeTests {
    @Test func anAddedPropertyReadsItsDefaultAndARemovedOneIsIgnored() throws {
        let garage = try Garage.inMemory()
        try garage.park(MNoteV1(id: "n1", text: "Milk", color: "blue"))
        var note = try #require(try garage.retrieve(MNote.self, identifier: "n1"))
        #expect(note.text == "Milk" && !note.isPinned && note.tags.isEmpty && note.views == 0)
        note.isPinned = true
        note.tags = ["shopping"]
        try garage.park(note)
        let again = try #require(try garage.retrieve(MNote.self, identifier: "n1"))
        #expect(again.isPinned && again.tags == ["shopping"])
        // A plain JSONDecoder reads the old shape the same way, null included.
        let old = Data(#"{"id":"n2","text":"Eggs","color":"red","views":null}"#.utf8)
        let decoded = try JSONDecoder().decode(MNote.self, from: old)
        #expect(!decoded.isPinned && decoded.views == 0)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MNote.self, from: Data(#"{"id":"n3","text":"Tea","isPinned":"yes"}"#.utf8))
        }
    }
}
