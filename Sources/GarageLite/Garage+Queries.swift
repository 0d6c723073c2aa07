import Foundation

// Queries: the objects of a type that match a predicate, sorted, counted or listed by
// identifier (`Query/` describes them; each engine answers them, `StoreView+Queries`).
extension Garage {
    /// Retrieves the objects `query` matches, in its order, at most its limit: whole graphs,
    /// as `garage.retrieve(_:identifier:)` builds them, from one snapshot.
    ///
    /// ```swift
    /// let work = Query(Note.self)
    ///     .filter(Field("tags").contains("work"))
    ///     .sortedByModificationDate(.descending)
    ///     .limit(20)
    /// let recent = try garage.retrieve(work)
    /// ```
    ///
    /// - throws: ``GarageError/invalidQuery(typeName:query:reason:)`` for a query the garage
    ///   can't answer (a garage that encrypts can't read its objects' properties); the errors
    ///   of `garage.retrieve(_:identifier:)` for an object that can't be retrieved.
    public func retrieve<T: Decodable & SendableMetatype>(_ query: Query<T>) throws -> [T] {
        try run(retrieving(query))
    }

    /// Retrieves the objects `query` matches (see `garage.retrieve(_:)`) without blocking the
    /// calling thread.
    public nonisolated(nonsending) func retrieve<T: Decodable & SendableMetatype>(_ query: Query<T>) async throws -> [T] {
        try await run(retrieving(query))
    }

    /// How many objects `query` matches, its limit aside.
    ///
    /// ```swift
    /// let open = try garage.count(Query(Task.self).filter(Field("done") == false))
    /// ```
    public func count<T: Decodable>(_ query: Query<T>) throws -> Int {
        try run(counting(query))
    }

    /// How many objects `query` matches (see `garage.count(_:)`) without blocking the calling thread.
    public nonisolated(nonsending) func count<T: Decodable>(_ query: Query<T>) async throws -> Int {
        try await run(counting(query))
    }

    /// The identifiers of the objects `query` matches, in its order, at most its limit,
    /// without decoding them.
    ///
    /// ```swift
    /// let pinned = try garage.identifiers(Query(Note.self).filter(Field("pinned") == true))
    /// ```
    public func identifiers<T: Decodable>(_ query: Query<T>) throws -> [String] {
        try run(listing(query))
    }

    /// The identifiers of the objects `query` matches (see `garage.identifiers(_:)`) without
    /// blocking the calling thread.
    public nonisolated(nonsending) func identifiers<T: Decodable>(_ query: Query<T>) async throws -> [String] {
        try await run(listing(query))
    }

    private func retrieving<T: Decodable & SendableMetatype>(_ query: Query<T>) throws -> StoreWork<[T]> {
        let rowQuery = try self.rowQuery(query)
        let configuration = configuration()
        return reading("query \(rowQuery.typeName)") { view in
            let decoder = configuration.decoder(view)
            return try view.identifiers(matching: rowQuery).compactMap { identifier in
                try view.row(ObjectKey(typeName: rowQuery.typeName, identifier: identifier))
                    .map { try configuration.decode(T.self, $0, with: decoder) }
            }
        }
    }

    private func counting<T: Decodable>(_ query: Query<T>) throws -> StoreWork<Int> {
        let rowQuery = try self.rowQuery(query)
        return reading("count a query of \(rowQuery.typeName)") { view in try view.count(matching: rowQuery) }
    }

    private func listing<T: Decodable>(_ query: Query<T>) throws -> StoreWork<[String]> {
        let rowQuery = try self.rowQuery(query)
        return reading("query \(rowQuery.typeName)") { view in try view.identifiers(matching: rowQuery) }
    }

    /// `query` as the store answers it, once checked against what `T`'s JSON can hold
    /// (``QueryShape``); a garage that encrypts its objects can filter and sort by what the
    /// rows hold beside them only.
    private func rowQuery<T: Decodable>(_ query: Query<T>) throws -> RowQuery {
        let typeName = try storedTypeName(T.self, listing: "query")
        let rowQuery = RowQuery(query, typeName: typeName)
        if let problem = rowQuery.problem(in: QueryShape.of(T.self)) {
            throw GarageError.invalidQuery(typeName: typeName, query: Self.describe(query), reason: problem)
        }
        if configuration().dataEncryptionDelegate != nil, let field = rowQuery.fields.first {
            throw GarageError.invalidQuery(
                typeName: typeName, query: Self.describe(query),
                reason: "the garage encrypts its objects, so the store can't read their property \(field) (README, "
                    + "\"Querying\"); a query of an encrypted garage filters by sync status and sorts by modification "
                    + "date only")
        }
        return rowQuery
    }

    /// The query as an error shows it: its predicate and its orders.
    private static func describe<T>(_ query: Query<T>) -> String {
        var text = "where \(query.predicate)"
        let orders = query.sortOrders.map { sort -> String in
            let key: String
            switch sort.key {
            case .field(let field): key = "\(field)"
            case .modificationDate: key = "modification date"
            }
            return key + (sort.order == .ascending ? "" : " descending")
        }
        if !orders.isEmpty { text += " sorted by " + orders.joined(separator: ", ") }
        return text
    }
}
