import Foundation
import Testing
@testable import GarageLite

/// `InlineIdentifiable` values stay in their parent's JSON wherever they are nested, while
/// the values nested in them follow the reference rule (issue 11).
@Suite("Coding: InlineIdentifiable values are stored inline")
struct InlineIdentifiableTests {
    static let milk = ChecklistItem(id: 1, text: "Milk")
    static let eggs = ChecklistItem(id: 1, text: "Eggs")

    /// Every row of the store, by key.
    private func keys(_ garage: Garage) throws -> [ObjectKey] {
        try garage.store.allStoredRows().map(\.key).sorted()
    }

    // MARK: The notes app of the issue

    @Test func twoListsKeepTheirOwnItemWithTheSameID() throws {
        let garage = try TestEngine.garage()
        let t = Checklist(id: "t", items: [Self.milk])
        let u = Checklist(id: "u", items: [Self.eggs])
        try garage.park(t)
        try garage.park(u)

        #expect(try garage.count(ChecklistItem.self) == 0)
        #expect(try keys(garage) == [
            ObjectKey(typeName: "Checklist", identifier: "t"), ObjectKey(typeName: "Checklist", identifier: "u"),
        ])
        #expect(try codingStoredJSON(garage, Checklist.self, "t")
            == #"{"id":"t","items":[{"id":1,"text":"Milk","done":false,"subitems":[]}]}"#)
        #expect(try garage.retrieve(Checklist.self, identifier: "t") == t)
        #expect(try garage.retrieve(Checklist.self, identifier: "u") == u)
        #expect(try garage.retrieveAll(Checklist.self) == [t, u])
    }

    @Test func aRemovedItemLeavesNoRow() throws {
        let garage = try TestEngine.garage()
        var t = Checklist(id: "t", items: [Self.milk, ChecklistItem(id: 2, text: "Bread")])
        try garage.park(t)
        t.items.removeFirst()
        t.items[0].done = true
        try garage.park(t)

        #expect(try garage.count(ChecklistItem.self) == 0)
        #expect(try garage.collectGarbage().objects.isEmpty)
        #expect(try garage.retrieve(Checklist.self, identifier: "t") == t)
    }

    @Test func anItemIsReadFromItsListEvenWhenARowOfItsTypeHasItsID() throws {
        let garage = try TestEngine.garage()
        // Parked on its own, an item is a root object under its id...
        let standalone = ChecklistItem(id: 1, text: "Standalone")
        try garage.park(standalone)
        #expect(try garage.identifier(for: standalone) == "1")
        // ...and the lists' items neither replace that row nor are read from it.
        try garage.park(Checklist(id: "t", items: [Self.milk]))
        #expect(try garage.count(ChecklistItem.self) == 1)
        #expect(try garage.retrieve(ChecklistItem.self, identifier: 1) == standalone)
        #expect(try garage.retrieve(Checklist.self, identifier: "t")?.items == [Self.milk])
        try garage.delete(standalone)
        #expect(try garage.retrieve(Checklist.self, identifier: "t")?.items == [Self.milk])
    }

    // MARK: Containers and nesting

    @Test func itemsAreInlineInEveryContainer() throws {
        let garage = try TestEngine.garage()
        func item(_ id: Int) -> ChecklistItem { ChecklistItem(id: id, text: "item \(id)") }
        var parent = item(7)
        parent.subitems = [item(8), ChecklistItem(id: 9, text: "deep", subitems: [item(10)])]
        let board = ChecklistBoard(
            id: "b", pinned: item(1), unpinned: nil, byTag: ["home": item(2), "work": item(1)],
            byNumber: [3: item(3)], votes: [item(4): 2], done: [item(5), item(6)], columns: [[parent], []],
            slots: [nil, item(1)], priority: .high, priorities: [.low, .high])
        try garage.park(board)

        #expect(try garage.count(ChecklistItem.self) == 0)
        #expect(try garage.count(ChecklistPriority.self) == 0)
        #expect(try keys(garage) == [ObjectKey(typeName: "ChecklistBoard", identifier: "b")])
        let stored = try codingStoredValue(garage, ChecklistBoard.self, "b")
        #expect(stored["pinned"] == .object([
            "id": .number("1"), "text": .string("item 1"), "done": .bool(false), "subitems": .array([]),
        ]))
        #expect(stored["priority"] == .string("high"))
        #expect(try garage.retrieve(ChecklistBoard.self, identifier: "b") == board)
    }

    @Test func anIdentifiableInsideAnInlineItemIsStillAReference() throws {
        let garage = try TestEngine.garage()
        let sam = CrewMember(id: "sam", name: "Sam")
        var item = ChecklistItem(id: 1, text: "Caulk the hull", assignee: sam)
        item.subitems = [ChecklistItem(id: 2, text: "Buy caulk", assignee: sam)]
        let list = Checklist(id: "t", items: [item])
        try garage.park(list)

        #expect(try garage.count(ChecklistItem.self) == 0)
        #expect(try garage.retrieve(CrewMember.self, identifier: "sam") == sam)
        let stored = try codingStoredValue(garage, Checklist.self, "t")
        #expect(stored["items"]?[0]?["assignee"] == .string("sam"))
        #expect(stored["items"]?[0]?["subitems"]?[0]?["assignee"] == .string("sam"))
        // The list's row lists the reference, so the member is reachable and checked.
        #expect(try garage.collectGarbage().objects.isEmpty)
        #expect(try garage.check().isOK)
        #expect(try garage.retrieve(Checklist.self, identifier: "t") == list)

        // A gone member is a missing reference, as anywhere: nil where optional.
        try garage.delete(sam, rule: .rowOnly)
        let retrieved = try #require(try garage.retrieve(Checklist.self, identifier: "t"))
        #expect(retrieved.items[0].assignee == nil)
        #expect(retrieved.items[0].text == "Caulk the hull")
    }

    @Test func anInlineIDNeedNotNameARow() throws {
        let garage = try TestEngine.garage()
        let cell = ChecklistCell(id: .init(row: 0, column: 1), text: "A1")
        let grid = ChecklistGrid(id: "g", cells: [cell])
        try garage.park(grid)
        #expect(try garage.retrieve(ChecklistGrid.self, identifier: "g") == grid)
        // At the top level it is a root, and its id names the row: that id can't.
        #expect(throws: GarageError.unsupportedIDConformance("Position")) {
            try garage.park(cell)
        }
    }

    // MARK: Classes

    @Test func inlineClassesAreStoredByValue() throws {
        let garage = try TestEngine.garage()
        let departed = LogEntry(id: 1, text: "Departed")
        let log = ShipLog(id: "voyage", entries: [departed, departed, LogEntry(id: 2, text: "Arrived")],
                          captain: CrewMember(id: "ada", name: "Ada"))
        try garage.park(log)

        #expect(try garage.count(LogEntry.self) == 0)
        #expect(try garage.count(CrewMember.self) == 1)
        let retrieved = try #require(try garage.retrieve(ShipLog.self, identifier: "voyage"))
        #expect(retrieved.entries.map(\.id) == [1, 1, 2])
        #expect(retrieved.entries.map(\.text) == ["Departed", "Departed", "Arrived"])
        #expect(retrieved.captain.name == "Ada")
        // Stored twice, retrieved as two instances, as every inline value.
        #expect(retrieved.entries[0] !== retrieved.entries[1])
    }

    @Test func aCycleOfInlineClassesIsRefusedWhenParked() throws {
        let garage = try TestEngine.garage()
        let entry = LogEntry(id: 1, text: "Round and round")
        entry.next = entry
        defer { entry.next = nil }
        let log = ShipLog(id: "loop", entries: [entry], captain: CrewMember(id: "ada", name: "Ada"))
        #expect(throws: EncodingError.self) {
            try garage.park(log)
        }
        #expect(try keys(garage).isEmpty)
    }

    // MARK: Identity, encryption

    @Test func aHashableObjectsIdentifierIncludesItsInlineItems() throws {
        let garage = try TestEngine.garage()
        let groceries = ChecklistTemplate(name: "Groceries", items: [Self.milk])
        let oatMilk = ChecklistTemplate(name: "Groceries", items: [ChecklistItem(id: 1, text: "Oat milk")])
        #expect(try garage.identifier(for: groceries) != garage.identifier(for: oatMilk))

        try garage.parkAll([groceries, oatMilk])
        #expect(try garage.count(ChecklistTemplate.self) == 2)
        #expect(try garage.count(ChecklistItem.self) == 0)
        #expect(try garage.retrieve(ChecklistTemplate.self, identifier: garage.identifier(for: groceries)) == groceries)
        #expect(try garage.retrieve(ChecklistTemplate.self, identifier: garage.identifier(for: oatMilk)) == oatMilk)
    }

    @Test func encryptedListsKeepTheirItems() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = TestEncryptor()
        let t = Checklist(id: "t", items: [Self.milk])
        let u = Checklist(id: "u", items: [Self.eggs])
        try garage.parkAll([t, u])

        #expect(try garage.count(ChecklistItem.self) == 0)
        let rows = try garage.store.allStoredRows()
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0.isEncrypted })
        #expect(rows.allSatisfy { !$0.data.contains("Milk") && !$0.data.contains("Eggs") })
        #expect(try garage.retrieveAll(Checklist.self) == [t, u])
    }

    // MARK: Stored before the type adopted InlineIdentifiable

    /// A store written by an app whose items were ordinary `Identifiable`s: a row per item,
    /// a reference stub per item in its list, now of the types that adopted the protocol.
    private func legacyGarage(_ park: (Garage) throws -> Void) throws -> Garage {
        let garage = try TestEngine.garage()
        try park(garage)
        try garage.migrateAll(fromOldClassName: Identity.typeName(LegacyChecklistItem.self), to: ChecklistItem.self)
        try garage.migrateAll(fromOldClassName: Identity.typeName(LegacyChecklist.self), to: Checklist.self)
        try garage.migrateAll(fromOldClassName: Identity.typeName(LegacyChecklistNote.self), to: ChecklistNote.self)
        try garage.migrateAll(fromOldClassName: Identity.typeName(LegacyChecklistTemplate.self), to: ChecklistTemplate.self)
        return garage
    }

    @Test func referenceStubsStoredBeforeAreReadFromTheirRows() throws {
        let sam = CrewMember(id: "sam", name: "Sam")
        let garage = try legacyGarage { garage in
            try garage.park(LegacyChecklist(id: "t", items: [
                LegacyChecklistItem(id: 1, text: "Milk", assignee: sam,
                                    subitems: [LegacyChecklistItem(id: 3, text: "Oat")]),
                LegacyChecklistItem(id: 2, text: "Bread", done: true),
            ]))
        }
        #expect(try codingStoredValue(garage, Checklist.self, "t")["items"] == .array([.string("1"), .string("2")]))
        #expect(try garage.count(ChecklistItem.self) == 3)

        let expected = Checklist(id: "t", items: [
            ChecklistItem(id: 1, text: "Milk", assignee: sam, subitems: [ChecklistItem(id: 3, text: "Oat")]),
            ChecklistItem(id: 2, text: "Bread", done: true),
        ])
        var list = try #require(try garage.retrieve(Checklist.self, identifier: "t"))
        #expect(list == expected)

        // Parking the list again stores its items inline; their old rows are garbage.
        list.items[1].done = false
        try garage.park(list)
        #expect(try codingStoredValue(garage, Checklist.self, "t")["items"]?[1]?["text"] == .string("Bread"))
        #expect(try garage.collectGarbage(dryRun: false).objects.map(\.description).sorted()
            == ["ChecklistItem(1)", "ChecklistItem(2)", "ChecklistItem(3)"])
        #expect(try garage.count(ChecklistItem.self) == 0)
        #expect(try garage.retrieve(Checklist.self, identifier: "t") == list)
        #expect(try garage.retrieve(CrewMember.self, identifier: "sam") == sam)
    }

    @Test func itemsThatCollidedBeforeReadTheLastOneParked() throws {
        // The bug of issue 11, stored: both lists' stubs name one row, which "u" overwrote.
        let garage = try legacyGarage { garage in
            try garage.park(LegacyChecklist(id: "t", items: [LegacyChecklistItem(id: 1, text: "Milk")]))
            try garage.park(LegacyChecklist(id: "u", items: [LegacyChecklistItem(id: 1, text: "Eggs")]))
        }
        #expect(try garage.retrieve(Checklist.self, identifier: "t")?.items == [Self.eggs])
        #expect(try garage.retrieve(Checklist.self, identifier: "u")?.items == [Self.eggs])
    }

    @Test func aHashableObjectStoredBeforeGetsANewIdentifierWhenParkedAgain() throws {
        let legacy = LegacyChecklistTemplate(name: "Groceries", items: [LegacyChecklistItem(id: 1, text: "Milk")])
        let garage = try legacyGarage { garage in try garage.park(legacy) }
        let oldIdentifier = try garage.identifier(for: legacy)

        let template = try #require(try garage.retrieve(ChecklistTemplate.self, identifier: oldIdentifier))
        #expect(template == ChecklistTemplate(name: "Groceries", items: [Self.milk]))
        let newIdentifier = try garage.identifier(for: template)
        #expect(newIdentifier != oldIdentifier)

        try garage.park(template)
        #expect(try garage.identifiers(of: ChecklistTemplate.self).sorted() == [oldIdentifier, newIdentifier].sorted())
        #expect(try garage.retrieve(ChecklistTemplate.self, identifier: newIdentifier) == template)
    }

    @Test func aStubStoredBeforeWhoseRowIsGoneIsNilWhereOptionalAndAnErrorOtherwise() throws {
        let garage = try legacyGarage { garage in
            try garage.park(LegacyChecklistNote(id: "n", main: LegacyChecklistItem(id: 8, text: "Main"),
                                                pinned: LegacyChecklistItem(id: 7, text: "Pinned")))
        }
        #expect(try garage.retrieve(ChecklistNote.self, identifier: "n")
            == ChecklistNote(id: "n", main: ChecklistItem(id: 8, text: "Main"),
                             pinned: ChecklistItem(id: 7, text: "Pinned")))

        try garage.delete(ChecklistItem.self, identifier: 7, rule: .rowOnly)
        #expect(try garage.retrieve(ChecklistNote.self, identifier: "n")
            == ChecklistNote(id: "n", main: ChecklistItem(id: 8, text: "Main"), pinned: nil))

        try garage.delete(ChecklistItem.self, identifier: 8, rule: .rowOnly)
        let error = try #require(throws: DecodingError.self) {
            try garage.retrieve(ChecklistNote.self, identifier: "n")
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("expected dataCorrupted, got \(error)")
            return
        }
        #expect(codingKeyNames(context.codingPath) == ["main"])
        #expect(context.debugDescription.contains("Missing Identifiable reference"))
        #expect(context.debugDescription.contains("ChecklistItem is InlineIdentifiable"))
        #expect(context.debugDescription.contains("identifier 8"))
    }
}

extension JSONValue {
    /// The value of the member `key` of an object.
    fileprivate subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` of an array.
    fileprivate subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }
}
