/// An `Identifiable` value that is stored inline, in its parent's JSON, rather than parked as
/// a row of its own.
///
/// A nested `Identifiable` value is parked as its own row, keyed by its type and `id` alone
/// (see <doc:ReferenceRule>). That suits an object that is shared, such as the author of many
/// books, but not a value that belongs to its parent and is `Identifiable` only so that SwiftUI
/// can list it: two checklists' items with the same `id` would be one row, and an item removed
/// from its list would stay parked. Conform such a type to `InlineIdentifiable`:
///
/// ```swift
/// struct ChecklistItem: InlineIdentifiable, Codable, Hashable {
///     var id: Int                    // unique within its checklist only
///     var text: String
/// }
///
/// struct Checklist: Mappable {
///     var id: String
///     var items: [ChecklistItem]     // in the checklist's JSON: [{"id":1,"text":"Milk"}]
/// }
///
/// try garage.park(Checklist(id: "t", items: [ChecklistItem(id: 1, text: "Milk")]))
/// try garage.park(Checklist(id: "u", items: [ChecklistItem(id: 1, text: "Eggs")]))
/// try garage.count(ChecklistItem.self)   // 0: each list keeps its own item 1
/// ```
///
/// - It is inline wherever it is nested: a property, an optional, an array, a set, a
///   dictionary's keys or values. Its `ID` may be of any type, since it names no row.
/// - The values nested in it follow the reference rule: an `Identifiable` one that is not
///   `InlineIdentifiable` is still parked as a row, referenced from the parent's row.
/// - Parked on its own, `garage.park(item)`, it is a root object, identified by its `id` like any
///   other; the copies inside its parents are independent of that row.
/// - Like every inline value, a class instance reached twice is stored, and retrieved, twice.
/// - A parent parked before its type adopted `InlineIdentifiable` holds reference stubs: they
///   are read from the rows they name, and parking the parent again stores the values inline.
///
/// Without a garage, `JSONEncoder` and `JSONDecoder` encode the type as they always do.
public protocol InlineIdentifiable: Identifiable {}
