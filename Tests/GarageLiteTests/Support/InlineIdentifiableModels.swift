import Foundation
import GarageLite

// The notes app of issue 11: checklists whose items are `Identifiable` for SwiftUI, their ids
// unique within one list only. The items are `InlineIdentifiable`, so they stay in their list.

/// A crew member a checklist item is assigned to: an ordinary `Identifiable`, so a row of its
/// own even inside an inline item.
struct CrewMember: Identifiable, Codable, Hashable {
    var id: String
    var name: String
}

/// A checklist's item: `Identifiable` for SwiftUI, with an id unique within its list.
struct ChecklistItem: InlineIdentifiable, Codable, Hashable {
    var id: Int
    var text: String
    var done = false
    var assignee: CrewMember? = nil
    /// Inline items inside an inline item.
    var subitems: [ChecklistItem] = []
}

struct Checklist: Identifiable, Codable, Equatable {
    var id: String
    var items: [ChecklistItem]
}

/// A priority that encodes as a string: inline, and not to be mistaken for a reference stub.
enum ChecklistPriority: String, InlineIdentifiable, Codable, Hashable {
    case low, high
    var id: String { rawValue }
}

/// Inline items in every kind of container.
struct ChecklistBoard: Identifiable, Codable, Equatable {
    var id: String
    var pinned: ChecklistItem?
    var unpinned: ChecklistItem?
    var byTag: [String: ChecklistItem]
    var byNumber: [Int: ChecklistItem]
    var votes: [ChecklistItem: Int]
    var done: Set<ChecklistItem>
    var columns: [[ChecklistItem]]
    var slots: [ChecklistItem?]
    var priority: ChecklistPriority
    var priorities: [ChecklistPriority]
}

/// A template of a checklist: `Hashable` and not `Identifiable`, so identified by its content.
struct ChecklistTemplate: Codable, Hashable {
    var name: String
    var items: [ChecklistItem]
}

/// A cell whose `ID` is neither a string nor string-convertible: fine inline, where it names
/// no row.
struct ChecklistCell: InlineIdentifiable, Codable, Equatable {
    struct Position: Hashable, Codable {
        var row: Int
        var column: Int
    }

    var id: Position
    var text: String
}

struct ChecklistGrid: Identifiable, Codable, Equatable {
    var id: String
    var cells: [ChecklistCell]
}

/// One entry of a ship's log: an inline class.
final class LogEntry: InlineIdentifiable, Codable {
    let id: Int
    var text: String
    var next: LogEntry?

    init(id: Int, text: String, next: LogEntry? = nil) {
        self.id = id
        self.text = text
        self.next = next
    }
}

final class ShipLog: Identifiable, Codable {
    let id: String
    var entries: [LogEntry]
    var captain: CrewMember

    init(id: String, entries: [LogEntry], captain: CrewMember) {
        self.id = id
        self.entries = entries
        self.captain = captain
    }
}

/// A checklist with a required and an optional item, for stubs to rows that are gone.
struct ChecklistNote: Identifiable, Codable, Equatable {
    var id: String
    var main: ChecklistItem
    var pinned: ChecklistItem?
}

// The same models as an app stored them before its items adopted `InlineIdentifiable`: every
// item a row of its own, behind a reference stub. Their rows are moved to the types above with
// `migrateAll(fromOldClassName:to:)`, which keeps the stubs and the lists of references.

struct LegacyChecklistItem: Identifiable, Codable, Hashable {
    var id: Int
    var text: String
    var done = false
    var assignee: CrewMember? = nil
    var subitems: [LegacyChecklistItem] = []
}

struct LegacyChecklist: Identifiable, Codable {
    var id: String
    var items: [LegacyChecklistItem]
}

struct LegacyChecklistNote: Identifiable, Codable {
    var id: String
    var main: LegacyChecklistItem
    var pinned: LegacyChecklistItem?
}

struct LegacyChecklistTemplate: Codable, Hashable {
    var name: String
    var items: [LegacyChecklistItem]
}
