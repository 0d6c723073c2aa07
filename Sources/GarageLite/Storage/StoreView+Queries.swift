import Foundation

// Queries through the view: the engine's SQL over the committed rows, or, when unsaved
// changes touch the type, the rule over the merged rows.
extension StoreView {
    /// The identifiers of the objects `query` matches, in its order, at most its limit.
    func identifiers(matching query: RowQuery) throws -> [String] {
        let query = try statements.resolvingTextIndex(query)
        guard let pending, pending.touches(type: query.typeName) else { return try statements.identifiers(matching: query) }
        return try statements.matchingRows(query) { body in
            for row in try pending.rows(ofType: query.typeName, in: statements, for: .all, now: now) { try body(row) }
        }.map(\.identifier)
    }

    /// How many objects `query` matches, its limit aside.
    func count(matching query: RowQuery) throws -> Int {
        let query = try statements.resolvingTextIndex(query)
        guard let pending, pending.touches(type: query.typeName) else { return try statements.count(matching: query) }
        var counted = query
        counted.limit = nil
        counted.sortOrders = []
        return try identifiers(matching: counted).count
    }

    /// The rows of the objects `query` matches, in its order, at most its limit, with the
    /// columns `purpose` needs, read in this view (in its snapshot, when it has one).
    func rows(matching query: RowQuery, for purpose: RowPurpose) throws -> [StoredRow] {
        try identifiers(matching: query).compactMap { identifier in
            try row(ObjectKey(typeName: query.typeName, identifier: identifier), for: purpose)
        }
    }
}
