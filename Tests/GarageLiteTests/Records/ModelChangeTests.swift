import Foundation
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
        let garage = try TestEngine.garage()
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

/// Version 1 of a contact, as an app first stored it, inline in a card and as an object of
/// its own in an address book.
struct MContactV1: Codable, Identifiable, Sendable {
    var id: String
    var name: String
    var phone: String
}

struct MCardV1: Codable, Identifiable, Sendable {
    var id: String
    var owner: MContactV1InlineV1
}

struct MContactV1InlineV1: Codable, Sendable {
    var name: String
}

struct MBookV1: Codable, Identifiable, Sendable {
    var id: String
    var contacts: [MContactV1]
}

/// Version 2: `name` renamed `fullName`, `phone` renamed twice (`phone`, then `mobile`, now
/// `cell`), and a property added.
struct MContact: Codable, Identifiable, Sendable, StoredTypeNamed, LegacyKeyed {
    static let storedTypeName = "MContactV1"
    static let sharesStoredTypeName = true
    static let legacyKeys = ["fullName": ["name"], "cell": ["mobile", "phone"]]
    var id: String
    var fullName: String
    var cell: String
    @Default<FalseByDefault> var isFavorite: Bool
}

struct MOwner: Codable, Sendable, LegacyKeyed {
    static let legacyKeys = ["fullName": ["name"]]
    var fullName: String
}

struct MCard: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "MCardV1"
    static let sharesStoredTypeName = true
    var id: String
    var owner: MOwner
}

struct MBook: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "MBookV1"
    static let sharesStoredTypeName = true
    var id: String
    var contacts: [MContact]
}

/// A row holding a renamed key under both names.
struct MContactBoth: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "MContactV1"
    static let sharesStoredTypeName = true
    var id: String
    var fullName: String
    var name: String
    var cell: String
}

/// Version 1 of a type that is renamed: `MPatient` becomes `MClient`. (It shares its name:
/// the old type wouldn't exist in the app that renamed it, and a type of this process that has
/// a name keeps it from being a former one.)
struct MPatient: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let sharesStoredTypeName = true
    var id: String
    var name: String
}

struct MWard: Codable, Identifiable, Sendable {
    var id: String
    var patients: [MPatient]
}

struct MClient: Codable, Identifiable, Sendable {
    var id: String
    var name: String
}

struct MWardV2: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "MWard"
    static let sharesStoredTypeName = true
    var id: String
    var patients: [MClient]
}

@Suite("Renamed properties and types")
struct RenamingTests {
    @Test func anOldRowReadsAfterAPropertyWasAddedAndAnotherRenamedInlineAndBehindReferences() throws {
        let garage = try TestEngine.garage()
        try garage.park(MBookV1(id: "b1", contacts: [MContactV1(id: "c1", name: "Ada", phone: "555-1"),
                                                    MContactV1(id: "c2", name: "Alan", phone: "555-2")]))
        try garage.park(MCardV1(id: "k1", owner: MContactV1InlineV1(name: "Grace")))
        // Behind references: the book's contacts are rows of their own.
        let book = try #require(try garage.retrieve(MBook.self, identifier: "b1"))
        #expect(book.contacts.map(\.fullName) == ["Ada", "Alan"] && book.contacts.map(\.cell) == ["555-1", "555-2"])
        #expect(book.contacts.allSatisfy { !$0.isFavorite })
        // Inline.
        #expect(try garage.retrieve(MCard.self, identifier: "k1")?.owner.fullName == "Grace")
        // Parked again, the row holds the new keys only.
        var ada = try #require(try garage.retrieve(MContact.self, identifier: "c1"))
        ada.cell = "555-9"
        ada.isFavorite = true
        try garage.park(ada)
        let json = try codingStoredJSON(garage, MContact.self, "c1")
        #expect(json.contains(#""fullName":"Ada""#) && json.contains(#""cell":"555-9""#) && !json.contains("phone"))
        let again = try #require(try garage.retrieve(MContact.self, identifier: "c1"))
        #expect(again.cell == "555-9" && again.isFavorite)
        // A key missing under every name says which it looked for.
        try garage.park(MCardV0(id: "k2"))
        #expect { _ = try garage.retrieve(MCard.self, identifier: "k2") } throws: { error in
            "\(error)".contains("owner")
        }
        try garage.park(MContactV0(id: "c9"))
        #expect { _ = try garage.retrieve(MContact.self, identifier: "c9") } throws: { error in
            "\(error)".contains("former keys")
        }
        // A key present under its current name wins over a former one.
        try garage.park(MContactBoth(id: "c3", fullName: "New", name: "Old", cell: "1"))
        #expect(try garage.retrieve(MContact.self, identifier: "c3")?.fullName == "New")
    }

    @Test func aRenamedTypeIsMovedWhenRegisteredWithItsFormerNameOnce() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ward.sqlite")
        do {
            let old = try TestEngine.garage(path: path)
            try await old.park(MWard(id: "w1", patients: [MPatient(id: "p1", name: "Ada"), MPatient(id: "p2", name: "Alan")]))
        }
        let garage = try TestEngine.garage(path: path)
        #expect(try await garage.retrieve(MClient.self, identifier: "p1") == nil)
        #expect(try await garage.register(MClient.self, formerTypeNames: ["MPatient"]) == 2)
        #expect(try await garage.retrieve(MClient.self, identifier: "p1")?.name == "Ada")
        #expect(try await garage.retrieve(MWardV2.self, identifier: "w1")?.patients.map(\.name) == ["Ada", "Alan"])
        #expect(try await garage.count(MPatient.self) == 0)
        #expect(try await garage.check().isOK)
        // Every later launch: nothing to move.
        #expect(try await garage.register(MClient.self, formerTypeNames: ["MPatient"]) == 0)
        // Inside a transaction, the move is one of its changes: read at once, rolled back with it,
        // and made again by the next call.
        let other = try TestEngine.garage(path: path)
        try await other.park(MPatient(id: "p3", name: "Grace"))
        try other.beginTransaction()
        try await other.park(MPatient(id: "p4", name: "Emmy"))
        #expect(try await other.register(MClient.self, formerTypeNames: ["MPatient"]) == 2)
        #expect(try await other.retrieve(MClient.self, identifier: "p4")?.name == "Emmy")
        try other.rollbackTransaction()
        #expect(try await garage.retrieve(MClient.self, identifier: "p3") == nil)
        #expect(try await other.register(MClient.self, formerTypeNames: ["MPatient"]) == 1)
        #expect(try await garage.retrieve(MClient.self, identifier: "p3")?.name == "Grace")
        // A name another type of the process has is not a former one.
        #expect(throws: GarageError.self) {
            try garage.register(MClient.self, formerTypeNames: ["MWard"])
        }
    }
}

/// Rows without the properties, under any name.
struct MCardV0: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "MCardV1"
    static let sharesStoredTypeName = true
    var id: String
}

struct MContactV0: Codable, Identifiable, Sendable, StoredTypeNamed {
    static let storedTypeName = "MContactV1"
    static let sharesStoredTypeName = true
    var id: String
}
