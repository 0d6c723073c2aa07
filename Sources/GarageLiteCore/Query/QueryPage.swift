import Foundation

/// One page of a query's objects (`garage.retrievePage(_:after:)`), and the cursor of the
/// next page.
public struct QueryPage<Object> {
    /// The page's objects, in the query's order.
    public var objects: [Object]
    /// Where the next page starts; `nil` when this page is the last.
    public var next: QueryCursor?

    /// Makes one of the given values, each stored as given.
    package init(objects: [Object], next: QueryCursor? = nil) {
        self.objects = objects
        self.next = next
    }
}

extension QueryPage: Sendable where Object: Sendable {}

/// Where a page of a query ends: the values the last object sorted by, and its identifier.
/// The next page starts after that position, not after a count of objects, so that objects
/// parked or deleted meanwhile neither repeat an object nor skip one that was there (an object
/// moved across the position by an edit shows on the side it moved to).
///
/// It is `Codable`: an app may keep it (in a view's state, in a URL) and ask for the next page
/// later. It belongs to its query's orders: another query's cursor is refused.
public struct QueryCursor: Sendable, Hashable, Codable {
    /// The query's orders, as a text: a cursor of other orders is refused.
    package let orders: String
    package let values: [RowQuery.SortValue]
    package let identifier: String

    /// Makes one of the given values, each stored as given.
    package init(orders: String, values: [RowQuery.SortValue], identifier: String) {
        self.orders = orders
        self.values = values
        self.identifier = identifier
    }
}

extension RowQuery {
    /// The orders as a cursor records them.
    package var ordersText: String {
        sortOrders.map { sort in
            let direction = sort.order == .ascending ? "+" : "-"
            switch sort.key {
            case .field(let field): return direction + field.path.joined(separator: "\u{1F}")
            case .modificationDate: return direction + "\u{1E}modified"
            case .relevance: return direction + "\u{1E}relevance"
            }
        }.joined(separator: "\u{1D}")
    }
}
