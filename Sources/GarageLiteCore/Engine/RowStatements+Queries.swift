import Foundation

// Queries answered by their rule (`RowQuery+Evaluation`): every live row of the type read,
// its JSON parsed, matched and sorted in Swift. These are the default implementations of the
// query requirements, so that an engine without a query compiler answers correctly; SQLite
// and PostgreSQL compile queries to SQL, and `QueryRuleTests` holds them to these.
extension RowStatements {
    /// The live rows of `query`'s type that match it, sorted, with their sort values: by rule.
    package func matchingRows(_ query: RowQuery, _ rows: (_ body: (RowRead) throws -> Void) throws -> Void)
        throws -> [(values: [RowQuery.SortValue], identifier: String)] {
        let readsContent = query.readsContent
        var matching: [(values: [RowQuery.SortValue], identifier: String)] = []
        try rows { read in
            let row = try read.get()
            let json: JSONValue
            if readsContent {
                do {
                    json = try JSONReader.parse(row.data)
                } catch {
                    throw GarageError.corruptData(typeName: row.key.typeName, identifier: row.key.identifier,
                                                  reason: "its JSON can't be read for a query (\(error))")
                }
            } else {
                json = .null
            }
            var references: [ObjectKey] = []
            if query.readsReferences {
                do {
                    references = try ReferenceList.decode(row.references)
                } catch {
                    throw GarageError.corruptData(typeName: row.key.typeName, identifier: row.key.identifier,
                                                  reason: "its list of references can't be read for a query (\(error))")
                }
            }
            guard query.matches(json, status: row.syncStatus, references: references) else { return }
            matching.append((query.sortValues(json, modificationDate: row.modificationDate), row.key.identifier))
        }
        if !query.sortOrders.isEmpty { matching.sort { query.precedes($0, $1) } }
        if let after = query.after { matching.removeAll { !query.precedes(after, $0) } }
        if let limit = query.limit, matching.count > limit { matching.removeLast(matching.count - limit) }
        return matching
    }

    /// `query`, with the type's text index when it searches text.
    ///
    /// - throws: ``GarageError/invalidQuery(typeName:query:reason:)`` when the type has none.
    package func resolvingTextIndex(_ query: RowQuery) throws -> RowQuery {
        guard query.textSearch != nil || query.sortsByRelevance else { return query }
        var resolved = query
        resolved.textIndex = try QueryIndexDefinition.recorded(in: metadata(QueryIndexDefinition.fact))
            .first { $0.typeName == query.typeName && $0.isText }
        guard resolved.textIndex != nil, query.textSearch != nil else {
            throw GarageError.invalidQuery(
                typeName: query.typeName, query: query.textSearch.map { "where text matches \"\($0)\"" } ?? "sorted by relevance",
                reason: query.textSearch == nil
                    ? "an order by relevance needs a text search in the query: search(_:) or .textMatches(_:)"
                    : "\(query.typeName) has no text index: declare one with garage.textIndex(\(query.typeName).self, on: …) "
                        + "(README, \"Querying\")")
        }
        return resolved
    }

    package func identifiersByRule(matching query: RowQuery) throws -> [String] {
        try matchingRows(query) { body in try forEachRow(ofType: query.typeName, for: .all, body) }.map(\.identifier)
    }

    package func identifiers(matching query: RowQuery) throws -> [String] {
        try identifiersByRule(matching: query)
    }

    package func rows(matching query: RowQuery, for purpose: RowPurpose) throws -> [StoredRow] {
        try identifiers(matching: query).compactMap { identifier in
            try row(ObjectKey(typeName: query.typeName, identifier: identifier), for: purpose)
        }
    }

    package func count(matching query: RowQuery) throws -> Int {
        var counted = query
        counted.limit = nil
        counted.sortOrders = []
        return try identifiers(matching: counted).count
    }
}

extension RowStatements {
    /// One ``row(_:for:)`` a key: the rule for ``rows(_:for:)``.
    package func rows(_ keys: [ObjectKey], for purpose: RowPurpose) throws -> [StoredRow?] {
        try keys.map { try row($0, for: purpose) }
    }
}
