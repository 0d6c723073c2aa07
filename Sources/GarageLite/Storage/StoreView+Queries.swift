import Foundation
import GarageLiteCore

// Queries through the view: the engine's SQL over the committed rows, or, when unsaved
// changes touch the type, the rule over the merged rows.
extension StoreView {
    /// The identifiers of the objects `query` matches, in its order, at most its limit.
    func identifiers(matching query: RowQuery) throws -> [String] {
        try identifiers(matchingResolved: resolving(query))
    }

    /// How many objects `query` matches, its limit aside.
    func count(matching query: RowQuery) throws -> Int {
        let query = try resolving(query)
        guard let pending, pending.touches(type: query.typeName) else { return try statements.count(matching: query) }
        var counted = query
        counted.limit = nil
        counted.sortOrders = []
        return try identifiers(matchingResolved: counted).count
    }

    /// The rows of the objects `query` matches, in its order, at most its limit, with the
    /// columns `purpose` needs, read in this view (in its snapshot, when it has one).
    func rows(matching query: RowQuery, for purpose: RowPurpose) throws -> [StoredRow] {
        let query = try resolving(query)
        guard let pending, pending.touches(type: query.typeName) else { return try statements.rows(matching: query, for: purpose) }
        return try identifiers(matchingResolved: query).compactMap { identifier in
            try row(ObjectKey(typeName: query.typeName, identifier: identifier), for: purpose)
        }
    }

    /// The identifiers of a query ``resolving(_:)`` gave: the engine's SQL, or the rule over
    /// the merged rows when unsaved changes touch the type.
    private func identifiers(matchingResolved query: RowQuery) throws -> [String] {
        guard let pending, pending.touches(type: query.typeName) else { return try statements.identifiers(matching: query) }
        return try statements.matchingRows(query) { body in
            for row in try pending.rows(ofType: query.typeName, in: statements, for: .all, now: now) { try body(row) }
        }.map(\.identifier)
    }

    /// `query` as the engines and the rule answer it: with its type's text index, and its
    /// reference predicates answered.
    private func resolving(_ query: RowQuery) throws -> RowQuery {
        try resolvingReferences(statements.resolvingTextIndex(query))
    }

    /// `query`, each of its reference predicates (`Field.references(_:where:)`) answered in this
    /// view: the identifiers of the referenced type's objects that match its inner predicate.
    private func resolvingReferences(_ query: RowQuery) throws -> RowQuery {
        func resolve(_ node: QueryPredicate.Node) throws -> QueryPredicate.Node {
            switch node {
            case .referenceMatches(let field, let target, let inner):
                return .referenceAmong(field, try identifiers(matching: RowQuery(typeName: target.typeName, predicate: QueryPredicate(inner))))
            case .and(let list): return .and(try list.map(resolve))
            case .or(let list): return .or(try list.map(resolve))
            case .not(let inner): return .not(try resolve(inner))
            default: return node
            }
        }
        var resolved = query
        resolved.predicate = try resolve(query.predicate)
        return resolved
    }
}
