import Foundation
import GRDB
import GarageLiteCore

// A page after a cursor: the rows after its position in the query's orders, as the rule's
// `precedes` says (`RowStatements+Queries`), in SQL.
extension SQLiteQuery {
    /// A piece of SQL and its arguments, in order.
    package struct Fragment {
        package var sql: String
        package var arguments: [(any DatabaseValueConvertible)?]

        package static func + (lhs: Fragment, rhs: Fragment) -> Fragment {
            Fragment(lhs.sql + rhs.sql, lhs.arguments + rhs.arguments)
        }

        package init(_ sql: String, _ arguments: [(any DatabaseValueConvertible)?] = []) {
            self.sql = sql
            self.arguments = arguments
        }
    }

    /// The rank and the value an order sorts on, as the ORDER BY reads them.
    package static func sortExpressions(_ key: QuerySort.Key) -> (rank: Fragment, value: Fragment) {
        switch key {
        case .modificationDate:
            // A date is a number (the rank the rule's sort value of a date has).
            return (Fragment("\(RowQuery.SortValue.number(0).rank)"), Fragment("modificationDate"))
        case .relevance:
            // Pages of a relevance order are refused (`Garage.retrievePage`): level here.
            return (Fragment("0"), Fragment("NULL"))
        case .field(let field):
            return (Fragment(rankExpression(field)), Fragment(valueExpression(field)))
        }
    }

    /// The rows after `values` and `identifier` in `orders`: after it on the first order, or
    /// level with it there and after it on the next, and so on; then by identifier.
    package static func after(_ orders: ArraySlice<QuerySort>, _ values: ArraySlice<RowQuery.SortValue>, _ identifier: String) -> Fragment {
        guard let sort = orders.first, let value = values.first else { return Fragment("identifier > ?", [identifier]) }
        let later = sort.order == .ascending ? ">" : "<"
        let (rank, sortValue) = sortExpressions(sort.key)
        let bound: (any DatabaseValueConvertible)?
        switch value {
        case .bool(let flag): bound = flag ? 1 : 0
        case .number(let number): bound = number
        case .string(let string): bound = string
        case .none, .other: bound = nil
        }
        let rankAfter = Fragment("COALESCE(") + rank + Fragment(" \(later) ?, 0)", [value.rank])
        let rest = after(orders.dropFirst(), values.dropFirst(), identifier)
        guard let bound else {
            // Values of this rank are all level (missing, null, or of no order).
            return rankAfter + Fragment(" OR (COALESCE(") + rank + Fragment(" = ?, 0) AND (", [value.rank]) + rest + Fragment("))")
        }
        // Within the cursor's rank, every row's value is of the cursor's kind.
        let valueAfter = Fragment(" OR COALESCE(") + rank + Fragment(" = ? AND ", [value.rank]) + sortValue
            + Fragment(" \(later) ?, 0)", [bound])
        let level = Fragment(" OR (COALESCE(") + rank + Fragment(" = ? AND ", [value.rank]) + sortValue
            + Fragment(" = ?, 0) AND (", [bound]) + rest + Fragment("))")
        return rankAfter + valueAfter + level
    }
}
