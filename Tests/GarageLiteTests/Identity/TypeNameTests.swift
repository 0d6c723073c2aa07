import Foundation
import Testing
@testable import GarageLite
@testable import GarageLiteCore

// The stored type names of issue 11: `Billing.Item` and `Cart.Item` are both "Item".
//
// The registry of names is the process's, shared by every test of this process. The types
// below have short names no other test's types have ("Item", "Entry", "Folio", "Basket",
// "Invoice", "Box<…>", "Tray<…>"), and the tests that make two of them collide always use the
// same one first, so that the outcome doesn't depend on the order the tests run in.

/// The two types of the issue: `String(describing:)` names both "Item".
enum Billing {
    struct Item: Codable, Identifiable, Equatable {
        var id: String
        var amount: Int
    }
}

enum Cart {
    struct Item: Codable, Identifiable, Equatable {
        var id: String
        var quantity: Int
    }

    /// Holds a `Cart.Item`: parking or retrieving it names the item's type too.
    struct Basket: Codable, Identifiable {
        var id: String
        var items: [Cart.Item]
    }
}

/// Two types named "Entry"; one declares a name of its own, so both can be stored.
enum Ledger {
    struct Entry: Codable, Identifiable, Equatable, Syncable, StoredTypeNamed {
        static let storedTypeName = "Ledger.Entry"
        var id: String
        var amount: Int
        var syncStatus: SyncStatus = .notSynced
    }

    /// References entries of both types.
    struct Folio: Codable, Identifiable {
        var id: String
        var entries: [Ledger.Entry]
        var notes: [Journal.Entry]
    }
}

enum Journal {
    struct Entry: Codable, Identifiable, Equatable, Syncable {
        var id: String
        var text: String
        var syncStatus: SyncStatus = .notSynced
    }
}

/// The app before `Billing.Item` declared its name: it parked items as "Item". In this process
/// these types share their names, so they don't keep "Item" and "Invoice" from the current
/// version's types (in an app, the two versions run in different processes).
enum BillingBeforeRenaming {
    /// Stored as "InvoiceLine", standing for the short name "Item" an app's old version used:
    /// the test of the issue's sequence binds "Item" to `Billing.Item` in this process, and a
    /// migration from a name another type of the process has is refused.
    struct Item: Codable, Identifiable, StoredTypeNamed {
        static let storedTypeName = "InvoiceLine"
        static let sharesStoredTypeName = true
        var id: String
        var amount: Int
    }

    struct Invoice: Codable, Identifiable, StoredTypeNamed {
        static let sharesStoredTypeName = true
        var id: String
        var items: [Item]
        var extra: Item?
    }
}

/// The app after: `Billing.Item` declares "Billing.Item".
enum BillingAfterRenaming {
    struct Item: Codable, Identifiable, Equatable, StoredTypeNamed {
        static let storedTypeName = "Billing.Item"
        var id: String
        var amount: Int
    }

    struct Invoice: Codable, Identifiable, Equatable {
        var id: String
        var items: [Item]
        var extra: Item?
    }
}

/// A generic type without a declared name: its default name holds its argument's short name.
struct Box<Content: Codable>: Codable, Identifiable {
    var id: String
    var content: Content
}

/// A generic type whose name holds its argument's stored name, when the argument declares one.
struct Tray<Content: Codable>: Codable, Identifiable {
    var id: String
    var content: Content
}

extension Tray: StoredTypeNamed where Content: StoredTypeNamed {
    static var storedTypeName: String { "Tray<\(Content.storedTypeName)>" }
}

@Suite("Stored type names")
struct TypeNameTests {
    /// The sequence of the issue: retrieving `Cart.Item` "1" decoded the `Billing.Item` row.
    /// Now the first use of the second type is refused, with an error that names both.
    @Test func aSecondTypeWithTheSameNameIsRefusedAtFirstUse() throws {
        let garage = try TestEngine.garage()
        try garage.park(Billing.Item(id: "1", amount: 30))
        let collision = GarageError.typeNameCollision(
            typeName: "Item", type: "GarageLiteTests.Cart.Item", existingType: "GarageLiteTests.Billing.Item")
        #expect(throws: collision) { try garage.retrieve(Cart.Item.self, identifier: "1") }
        // Every use is refused, each time, and writes nothing.
        #expect(throws: collision) { try garage.park(Cart.Item(id: "2", quantity: 1)) }
        #expect(throws: collision) { try garage.retrieveAll(Cart.Item.self) }
        #expect(throws: collision) { try garage.count(Cart.Item.self) }
        #expect(throws: collision) { try garage.identifiers(of: Cart.Item.self) }
        #expect(throws: collision) { try garage.deleteAll(Cart.Item.self) }
        #expect(throws: collision) { try garage.migrateAll(fromOldClassName: "Thing", to: Cart.Item.self) }
        #expect(throws: collision) { _ = try garage.changes(to: Cart.Item.self, identifier: "1") }
        #expect(throws: collision) { try garage.claim(Cart.Item.self, limit: 10) }
        #expect(throws: collision) { try garage.forEach(Cart.Item.self) { _ in } }
        // As a reference too: parking or retrieving a parent names its children's type.
        #expect(throws: collision) { try garage.park(Cart.Basket(id: "b", items: [Cart.Item(id: "3", quantity: 2)])) }
        #expect(try garage.count(Cart.Basket.self) == 0)
        #expect(try garage.retrieveAll(Billing.Item.self) == [Billing.Item(id: "1", amount: 30)])

        // The registry is the process's: another garage, with no "Item" row, refuses it too.
        let other = try TestEngine.garage()
        #expect(throws: collision) { try other.park(Cart.Item(id: "1", quantity: 1)) }
        try other.park(Billing.Item(id: "9", amount: 1))
        #expect(try other.count(Billing.Item.self) == 1)
    }

    /// The same from `async` code, and when observing.
    @Test func theCollisionIsTheSameFromAsyncCode() async throws {
        let garage = try TestEngine.garage()
        try await garage.park(Billing.Item(id: "1", amount: 30))
        await #expect(throws: GarageError.self) { try await garage.retrieve(Cart.Item.self, identifier: "1") }
        await #expect(throws: GarageError.self) { try await garage.park(Cart.Item(id: "2", quantity: 1)) }
        // Observing it is refused too: the sequence ends at once.
        var changes = garage.changes(of: Cart.Item.self).makeAsyncIterator()
        #expect(await changes.next() == nil)
        #expect(try await garage.retrieve(Billing.Item.self, identifier: "1") == Billing.Item(id: "1", amount: 30))
    }

    @Test func theErrorNamesBothTypesAndTheFix() throws {
        let garage = try TestEngine.garage()
        try garage.park(Billing.Item(id: "1", amount: 30))
        let error = try #require(throws: GarageError.self) { try garage.retrieve(Cart.Item.self, identifier: "1") }
        #expect(error.description == """
            The types GarageLiteTests.Cart.Item and GarageLiteTests.Billing.Item would both be stored under the \
            type name "Item", and each would read the other's objects, so GarageLiteTests.Cart.Item was refused: \
            GarageLiteTests.Billing.Item used the name first in this process. Give one of them a name of its own, \
            for example `extension Cart.Item: StoredTypeNamed { static let storedTypeName = "Cart.Item" }`, then \
            move the objects it already stored as "Item" with \
            `garage.migrateAll(fromOldClassName: "Item", to: Cart.Item.self)`.
            """)
        #expect(error.errorDescription == error.description)
    }

    /// The fix the error suggests is code: the module and a local type's unnamed contexts are
    /// left out of it, in generic arguments too.
    @Test func theSuggestedFixSpellsTheTypeAsItsCodeDoes() {
        func suggestion(_ type: String) -> String {
            let text = GarageError.typeNameCollision(typeName: "X", type: type, existingType: "Other.X").description
            let start = text.range(of: "`extension ")!.upperBound
            return String(text[start..<text.range(of: ": StoredTypeNamed", range: start..<text.endIndex)!.lowerBound])
        }
        #expect(suggestion("Shop.Cart.Item") == "Cart.Item")
        #expect(suggestion("Shop.Box<Shop.Cart.Item>") == "Box<Cart.Item>")
        #expect(suggestion("Shop.Box<Swift.Int>") == "Box<Swift.Int>")
        #expect(suggestion("Shop.Pair<Shop.Cart.Item, Shop.Billing.Item>") == "Pair<Cart.Item, Billing.Item>")
        #expect(suggestion("Shop.(unknown context at $10a2c3).(unknown context at $10a2d0).Item") == "Item")
        #expect(suggestion("Item") == "Item")
    }

    /// With a declared name, the two "Entry" types are stored side by side in one store, and
    /// every operation uses the declared name: rows, references, counts, claims, statuses.
    @Test func aDeclaredNameLetsBothTypesBeStoredSideBySide() throws {
        let garage = try TestEngine.garage()
        let folio = Ledger.Folio(
            id: "b", entries: [Ledger.Entry(id: "1", amount: 10)], notes: [Journal.Entry(id: "1", text: "paid")])
        try garage.park(folio)
        try garage.park(Ledger.Entry(id: "2", amount: 20))

        let retrieved = try #require(try garage.retrieve(Ledger.Folio.self, identifier: "b"))
        #expect(retrieved.entries.map(\.amount) == [10])
        #expect(retrieved.notes.map(\.text) == ["paid"])
        #expect(try garage.retrieve(Ledger.Entry.self, identifier: "1")?.amount == 10)
        #expect(try garage.retrieve(Journal.Entry.self, identifier: "1")?.text == "paid")
        #expect(try garage.count(Ledger.Entry.self) == 2)
        #expect(try garage.identifiers(of: Journal.Entry.self) == ["1"])
        let stored = try garage.records(limit: Int(Int32.max)).map { "\($0.typeName)(\($0.identifier))" }.sorted()
        #expect(stored == ["Entry(1)", "Folio(b)", "Ledger.Entry(1)", "Ledger.Entry(2)"])
        let folioRow = try #require(try garage.store.storedRow(ObjectKey(typeName: "Folio", identifier: "b")))
        #expect(try ReferenceList.decode(folioRow.references) == [
            ObjectKey(typeName: "Ledger.Entry", identifier: "1"), ObjectKey(typeName: "Entry", identifier: "1"),
        ])
        #expect(try garage.check().problems.isEmpty)

        // Sync status, claims and metadata name the type as the rows do.
        #expect(try garage.retrieveAll(Ledger.Entry.self, withStatus: .notSynced).count == 2)
        #expect(try garage.syncStatusCounts()["Ledger.Entry"] == [.notSynced: 2])
        let claim = try garage.claim(Ledger.Entry.self, limit: 10)
        #expect(claim.objects.map(\.id).sorted() == ["1", "2"])
        try garage.complete(claim)
        #expect(try garage.metadata(Ledger.Entry.self, identifier: "1")?.typeName == "Ledger.Entry")
        #expect(try garage.syncStatus(for: Journal.Entry(id: "1", text: "")) == .notSynced)

        #expect(try garage.deleteAll(Journal.Entry.self, rule: .rowOnly) == 1)
        #expect(try garage.count(Ledger.Entry.self) == 2)
    }

    @Test func observingUsesTheDeclaredName() async throws {
        let garage = try TestEngine.garage()
        var changes = garage.changes(of: Ledger.Entry.self).makeAsyncIterator()
        try await garage.park(Journal.Entry(id: "1", text: ""))           // another type: not delivered
        try await garage.park(Ledger.Entry(id: "1", amount: 1))
        #expect(await changes.next() == [GarageChange(typeName: "Ledger.Entry", identifier: "1", kind: .parked)])
    }

    /// Rows parked as "Item" before `Billing.Item` declared "Billing.Item" are out of its sight
    /// until `migrateAll` moves them; it also rewrites the references parents hold to them.
    @Test func migrateAllMovesTheRowsOfTheOldShortName() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("billing.sqlite")
        do {
            let garage = try TestEngine.garage(path: path)
            try garage.park(BillingBeforeRenaming.Invoice(
                id: "inv", items: [.init(id: "1", amount: 10), .init(id: "2", amount: 20)], extra: .init(id: "3", amount: 5)))
            #expect(try garage.count(BillingBeforeRenaming.Item.self) == 3)
        }

        let garage = try TestEngine.garage(path: path)
        #expect(try garage.count(BillingAfterRenaming.Item.self) == 0)
        #expect(throws: DecodingError.self) { try garage.retrieve(BillingAfterRenaming.Invoice.self, identifier: "inv") }

        #expect(try garage.migrateAll(fromOldClassName: "InvoiceLine", to: BillingAfterRenaming.Item.self) == 3)
        #expect(try garage.identifiers(of: BillingAfterRenaming.Item.self) == ["1", "2", "3"])
        #expect(try garage.retrieve(BillingAfterRenaming.Invoice.self, identifier: "inv") == BillingAfterRenaming.Invoice(
            id: "inv", items: [.init(id: "1", amount: 10), .init(id: "2", amount: 20)], extra: .init(id: "3", amount: 5)))
        let invoice = try #require(try garage.store.storedRow(ObjectKey(typeName: "Invoice", identifier: "inv")))
        #expect(try ReferenceList.decode(invoice.references).map(\.typeName) == ["Billing.Item", "Billing.Item", "Billing.Item"])
        #expect(try garage.store.storedTypes().sorted() == ["Billing.Item", "Invoice"])
        #expect(try garage.check().problems.isEmpty)
        // Parking again stores the new name only.
        try garage.park(BillingAfterRenaming.Item(id: "4", amount: 40))
        #expect(try garage.store.storedTypes().sorted() == ["Billing.Item", "Invoice"])
    }

    /// A newcomer did as the collision error says, after the other type had parked under the
    /// old name: `migrateAll` moved that type's objects too. It is refused instead.
    @Test func aMigrationFromANameAnotherTypeHasIsRefused() throws {
        let garage = try TestEngine.garage()
        try garage.park(Shop.Widget(id: "w1", size: 1))                  // "Widget" is Shop.Widget's
        #expect(throws: GarageError.ambiguousMigration(
            oldName: "Widget", type: String(reflecting: Depot.Widget.self), otherType: String(reflecting: Shop.Widget.self))) {
            try garage.migrateAll(fromOldClassName: "Widget", to: Depot.Widget.self)
        }
        #expect(try garage.retrieve(Shop.Widget.self, identifier: "w1")?.size == 1)
        #expect(try garage.count(Depot.Widget.self) == 0)
    }

    /// `Box<Int>` and `Box<String>` are two names; `Box<Ledger.Entry>` and `Box<Journal.Entry>`
    /// are one, "Box<Entry>": a generic argument is named by its short Swift name, not by its
    /// declared one. A generic type can name itself after its argument's stored name (`Tray`).
    @Test func genericTypesAreNamedWithTheirArguments() throws {
        let garage = try TestEngine.garage()
        try garage.park(Box(id: "1", content: 1))
        try garage.park(Box(id: "1", content: "one"))
        #expect(try garage.retrieve(Box<Int>.self, identifier: "1")?.content == 1)
        #expect(try garage.retrieve(Box<String>.self, identifier: "1")?.content == "one")
        #expect(try Identity.typeName(Box<Int>.self) == "Box<Int>")
        #expect(try Identity.typeName(Box<String>.self) == "Box<String>")

        try garage.park(Box(id: "1", content: Ledger.Entry(id: "e", amount: 1)))
        #expect(throws: GarageError.typeNameCollision(
            typeName: "Box<Entry>", type: "GarageLiteTests.Box<GarageLiteTests.Journal.Entry>",
            existingType: "GarageLiteTests.Box<GarageLiteTests.Ledger.Entry>")) {
            try garage.park(Box(id: "1", content: Journal.Entry(id: "e", text: "")))
        }

        try garage.park(Tray(id: "1", content: Ledger.Entry(id: "e", amount: 1)))
        try garage.park(Tray(id: "1", content: Journal.Entry(id: "e", text: "")))
        #expect(try Identity.typeName(Tray<Ledger.Entry>.self) == "Tray<Ledger.Entry>")
        #expect(try Identity.typeName(Tray<Journal.Entry>.self) == "Tray<Entry>")
        #expect(try garage.retrieve(Tray<Ledger.Entry>.self, identifier: "1")?.content.amount == 1)
        #expect(try garage.retrieve(Tray<Journal.Entry>.self, identifier: "1")?.content.text == "")
    }

    /// The registry's rule, on a registry of its own: first use binds, another type is refused
    /// each time it asks, sharing types neither bind nor are refused.
    @Test func theRegistryBindsANameToTheFirstTypeThatUsesIt() throws {
        struct First {}
        struct Second {}
        struct Sharing: StoredTypeNamed {
            static let storedTypeName = "First"
            static let sharesStoredTypeName = true
        }
        struct Declaring: StoredTypeNamed { static let storedTypeName = "First" }
        var names = TypeNames()

        #expect(try names.check(.init(First.self)) == "First")
        #expect(try names.check(.init(First.self)) == "First")
        #expect(names.checkedName(of: ObjectIdentifier(First.self)) == "First")
        #expect(try names.check(.init(Second.self)) == "Second")
        // A declared name that is another type's default name collides too, every time.
        for _ in 0..<2 {
            #expect(throws: GarageError.self) { try names.check(.init(Declaring.self)) }
        }
        #expect(names.checkedName(of: ObjectIdentifier(Declaring.self)) == nil)
        // A sharing type uses a name another type has, and leaves it to it.
        #expect(try names.check(.init(Sharing.self)) == "First")
        #expect(throws: GarageError.self) { try names.check(.init(Declaring.self)) }

        // Sharing first doesn't bind the name either.
        var fresh = TypeNames()
        #expect(try fresh.check(.init(Sharing.self)) == "First")
        #expect(try fresh.check(.init(Declaring.self)) == "First")
        #expect(throws: GarageError.typeNameCollision(
            typeName: "First", type: String(reflecting: First.self), existingType: String(reflecting: Declaring.self))) {
            try fresh.check(.init(First.self))
        }
    }

    /// A subclass inherits its superclass's declared name, so the two collide, unless the name
    /// is a `class var` the subclass overrides.
    @Test func aSubclassInheritsADeclaredName() throws {
        class Vehicle: StoredTypeNamed { static let storedTypeName = "Fleet.Vehicle" }
        final class Van: Vehicle {}
        class Animal: StoredTypeNamed { class var storedTypeName: String { "Zoo.Animal" } }
        final class Zebra: Animal { override class var storedTypeName: String { "Zoo.Zebra" } }
        var names = TypeNames()
        #expect(try names.check(.init(Vehicle.self)) == "Fleet.Vehicle")
        #expect(throws: GarageError.self) { try names.check(.init(Van.self)) }
        #expect(try names.check(.init(Animal.self)) == "Zoo.Animal")
        #expect(try names.check(.init(Zebra.self)) == "Zoo.Zebra")
    }

    /// One function names types: no other file of the library describes a type itself.
    @Test func onlyIdentityDescribesTypes() throws {
        let describing = try Regex(#"String\((describing|reflecting): *[A-Za-z_.<>]+\.self\)"#)
        for (folder, path, text) in try ArchitectureTests.productFiles() where folder != "GarageLiteCore/Identity" {
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            for line in code where line.contains(describing) {
                Issue.record("\(path) names a type itself: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }
}

/// Two types, one short name: `Shop.Widget` keeps "Widget", `Depot.Widget` declares its own.
enum Shop {
    struct Widget: Codable, Identifiable {
        var id: String
        var size: Int
    }
}

enum Depot {
    struct Widget: Codable, Identifiable, StoredTypeNamed {
        static let storedTypeName = "Depot.Widget"
        var id: String
        var size: Int
    }
}
