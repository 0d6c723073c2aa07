import Foundation

// Queries through the view: the engine's SQL over the committed rows, or, when unsaved
// changes touch the type, the rule over the merged rows.
extension StoreView {
    /// The identifiers of the objects `query` matches, in its order, at most its limit.
    func identifiers(matching query: RowQuery) throws -> [String] {
        let query = try resolvingReferences(statements.resolvingTextIndex(query))
        guard let pending, pending.touches(type: query.typeName) else { return try statements.identifiers(matching: query) }
        return try statements.matchingRows(query) { body in
            for row in try pending.rows(ofType: query.typeName, in: statements, for: .all, now: now) { try body(row) }
        }.map(\.identifier)
    }

    /// How many objects `query` matches, its limit aside.
    func count(matching query: RowQuery) throws -> Int {
        let query = try resolvingReferences(statements.resolvingTextIndex(query))
        guard let pending, pending.touches(type: query.typeName) else { return try statements.count(matching: query) }
        var counted = query
        counted.limit = nil
        counted.sortOrders = []
        return try identifiers(matching: counted).count
    }

    /// The rows of the objects `query` matches, in its order, at most its limit, with the
    /// columns `purpose` needs, read in this view (in its snapshot, when it has one).
    func rows(matching query: RowQuery, for purpose: RowPurpose) throws -> [StoredRow] {
        if pending?.touches(type: query.typeName) != true {
            return try statements.rows(matching: resolvingReferences(statements.resolvingTextIndex(query)), for: purpose)
        }
        return try identifiers(matching: query).compactMap { identifier in
            try row(ObjectKey(typeName: query.typeName, identifier: identifier), for: purpose)
        }
    }

    /// `query`, each of its reference predicates (`Field.references(_:where:)`) answered in this
    /// view: the identifiers of the referenced type's objects that match its inner predicate.
    private func resolvingReferences(_ query: RowQuery) throws -> RowQuery {
        func resolve(_ node: QueryPredicate.Node) throws -> QueryPredicate.Node {
            switch node {
            case .referenceMatches(let field, let target, let inner):
                return .referenceAmong(field, try identifiers(matching: RowQuery(typeName: target.typeName, predicate: QueryPredicate(inner))))
            case .and(let left, let right): return .and(try resolve(left), try resolve(right))
            case .or(let left, let right): return .or(try resolve(left), try resolve(right))
            case .not(let inner): return .not(try resolve(inner))
            default: return node
            }
        }
        var resolved = query
        resolved.predicate = try resolve(query.predicate)
        return resolved
    }
}
