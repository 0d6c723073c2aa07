import Foundation
import GarageLiteCore

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

    /// Retrieves one page of the objects `query` matches: the first page, or the one after
    /// `cursor`, the previous page's ``QueryPage/next``. The query's limit is the page's size
    /// (``defaultQueryPageSize`` when it has none).
    ///
    /// ```swift
    /// let byTitle = Query(Note.self).sorted(by: Field("title")).limit(50)
    /// var page = try garage.retrievePage(byTitle)
    /// show(page.objects)
    /// while let next = page.next {
    ///     page = try garage.retrievePage(byTitle, after: next)
    ///     show(page.objects)
    /// }
    /// ```
    ///
    /// A page starts after the last object of the one before in the query's order, not after a
    /// count: objects parked or deleted between two pages neither repeat an object nor skip one.
    ///
    /// - throws: ``GarageError/invalidQuery(typeName:query:reason:)`` for a cursor of a query
    ///   with other orders, and as `retrieve(_:)` does.
    public func retrievePage<T: Decodable & SendableMetatype>(_ query: Query<T>, after cursor: QueryCursor? = nil) throws -> QueryPage<T> {
        try run(retrievingPage(query, after: cursor))
    }

    /// Retrieves one page of the objects `query` matches (see `retrievePage(_:after:)`)
    /// without blocking the calling thread.
    public nonisolated(nonsending) func retrievePage<T: Decodable & SendableMetatype>(
        _ query: Query<T>, after cursor: QueryCursor? = nil
    ) async throws -> QueryPage<T> {
        try await run(retrievingPage(query, after: cursor))
    }

    /// The records of the objects a query of records matches (``Query/init(recordsOf:)``), in
    /// its order, at most its limit: what the store holds, as `records(ofType:after:limit:)`
    /// returns it, without the app's types.
    public func records(matching query: Query<ObjectRecord>) throws -> [ObjectRecord] {
        try Self.records(run(readingRecords(query)), configuration().encryption)
    }

    /// The records of the objects a query of records matches (see `records(matching:)`)
    /// without blocking the calling thread.
    public nonisolated(nonsending) func records(matching query: Query<ObjectRecord>) async throws -> [ObjectRecord] {
        try Self.records(await run(readingRecords(query)), configuration().encryption)
    }

    /// The size of a page of a query without a limit (`retrievePage(_:after:)`).
    public static let defaultQueryPageSize = 100

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
}
