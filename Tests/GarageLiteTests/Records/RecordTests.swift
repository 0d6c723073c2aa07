import Foundation
@testable import GarageLite
import Testing

struct RPreferences: Codable, Equatable, Sendable {
    var theme: String
    var fontSize: Int
}

struct RShelf: Codable, Sendable {
    var label: String
    var books: [Book]
}

struct RPalette: Codable, Hashable, Sendable {
    var colors: [String]
}

/// Issue 13: records — any `Codable` value parked under an identifier the app chooses — and a
/// count of every object.
@Suite("Records")
struct RecordTests {
    @Test func aValueWithoutIdentityIsParkedUnderAChosenIdentifier() throws {
        let garage = try TestEngine.garage()
        #expect(try garage.park(RPreferences(theme: "dark", fontSize: 12), identifier: "preferences") == "preferences")
        try garage.park(RPreferences(theme: "light", fontSize: 14), identifier: "preferences")   // replaces it
        #expect(try garage.retrieve(RPreferences.self, identifier: "preferences") == RPreferences(theme: "light", fontSize: 14))
        #expect(try garage.park(["milk", "eggs"], identifier: 7) == "7")
        #expect(try garage.retrieve([String].self, identifier: 7) == ["milk", "eggs"])
        #expect(try garage.identifiers(of: RPreferences.self) == ["preferences"])
        #expect(try garage.count() == 2)
        #expect(try garage.metadata(RPreferences.self, identifier: "preferences")?.revision == 2)
        #expect(try garage.delete(RPreferences.self, identifier: "preferences"))
        #expect(try !garage.delete(RPreferences.self, identifier: "preferences"))
        #expect(try garage.count() == 1)
        // A generated identifier: a UUID, returned as stored.
        let generated = try garage.park(RPreferences(theme: "auto", fontSize: 10), identifier: UUID())
        #expect(UUID(uuidString: generated) != nil)
        #expect(try garage.retrieve(RPreferences.self, identifier: generated)?.theme == "auto")
    }

    /// A record holds references as any object does.
    @Test func aRecordsIdentifiableValuesAreRowsOfTheirOwn() async throws {
        let garage = try TestEngine.garage()
        let sam = Author(id: UUID(), name: "Sam")
        try await garage.park(RShelf(label: "Favourites", books: [Book(id: 1, title: "One", author: sam)]), identifier: "favourites")
        #expect(try await garage.count(Book.self) == 1)
        #expect(try await garage.referrers(of: Book.self, identifier: 1) == [ObjectKey(typeName: "RShelf", identifier: "favourites")])
        #expect(try await garage.retrieve(RShelf.self, identifier: "favourites")?.books.first?.author.name == "Sam")
        #expect(try await garage.count() == 3)
    }

    @Test func anIdentifiableValueIsParkedUnderItsOwnIdOnly() throws {
        let garage = try TestEngine.garage()
        #expect(try garage.park(Counter(id: 3, value: 1), identifier: 3) == "3")
        let error = #expect(throws: GarageError.self) { try garage.park(Counter(id: 3, value: 1), identifier: "three") }
        guard case .invalidIdentifier("Counter", "three", let reason)? = error else {
            Issue.record("expected invalidIdentifier, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("the id 3"))
        #expect(try garage.count(Counter.self) == 1)
    }

    /// A Hashable record under a string: a miss is nil. An integer is refused on a miss, as a
    /// GarageStorage `hashValue` is.
    @Test func aHashableRecordIsFoundByItsIdentifier() throws {
        let garage = try TestEngine.garage()
        try garage.park(RPalette(colors: ["red"]), identifier: "warm")
        #expect(try garage.retrieve(RPalette.self, identifier: "warm")?.colors == ["red"])
        #expect(try garage.retrieve(RPalette.self, identifier: "cold") == nil)
        #expect(throws: GarageError.contentIdentifierExpected(typeName: "RPalette", identifier: "42")) {
            try garage.retrieve(RPalette.self, identifier: 42)
        }
    }

    @Test func countSeesUnsavedChanges() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 1))
        garage.isAutosaveEnabled = false
        try garage.park(RPreferences(theme: "dark", fontSize: 12), identifier: "p")
        try garage.delete(Counter.self, identifier: 1)
        #expect(try garage.count() == 1)
        garage.discardUnsavedChanges()
        #expect(try garage.count() == 1)
        #expect(try garage.count(Counter.self) == 1)
    }
}
