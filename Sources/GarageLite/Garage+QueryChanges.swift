import Foundation
import GarageLiteCore

// Observing a query: its objects again after each commit that changed them.
extension Garage {
    /// The objects `query` matches, again after each commit that changed them: an object
    /// that starts or stops matching, one of them parked again or given another sync status,
    /// another order.
    ///
    /// ```swift
    /// let urgent = Query(Note.self).filter(Field("tags").contains("urgent")).sorted(by: Field("title"))
    /// let changes = try garage.changes(matching: urgent)
    /// show(try garage.retrieve(urgent))
    /// for try await notes in changes {
    ///     show(notes)
    /// }
    /// ```
    ///
    /// The sequence starts from the query's objects when this call returns, which it reads
    /// then (retrieve them to show them first): the first value yielded differs from them. The
    /// objects are retrieved when the element is read; a burst of commits read late yields the
    /// latest objects once, and commits that leave them as they were yield nothing. Commits of
    /// other garages and processes on the same store arrive as for ``changes(of:)``. The objects
    /// need not be `Sendable`: they are retrieved on the actor that iterates.
    ///
    /// - throws: ``GarageError/invalidQuery(typeName:query:reason:)`` for a query the garage
    ///   can't answer, and the errors of reading its objects' versions.
    public func changes<T: Decodable & SendableMetatype>(matching query: Query<T>) throws -> QueryChanges<T> {
        let rowQuery = try self.rowQuery(query)
        let changes = observers.subscribe(typeName: rowQuery.typeName, store: store)
        // Read after subscribing: a commit made in between is told, then found already read.
        let start = try run(queryVersions(rowQuery))
        return QueryChanges(garage: self, query: rowQuery, start: start, changes: changes)
    }
}

/// A query's objects after each commit that changed them: see
/// ``Garage/changes(matching:)``.
public struct QueryChanges<Object: Decodable & SendableMetatype>: AsyncSequence, Sendable {
    /// The query's objects after a commit that changed them.
    public typealias Element = [Object]
    /// What iterating throws: the errors of retrieving the objects.
    public typealias Failure = any Error

    let garage: Garage
    let query: RowQuery
    let start: [QueryVersion]
    let changes: AsyncStream<[GarageChange]>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(garage: garage, query: query, changes: changes.makeAsyncIterator(), last: start)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let garage: Garage
        let query: RowQuery
        var changes: AsyncStream<[GarageChange]>.AsyncIterator
        /// The versions of the last objects yielded, or before any, of those at subscription.
        var last: [QueryVersion]

        /// The query's objects after the next commit that changed them, or `nil` when the
        /// sequence ends; retrieved on the actor that iterates.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [Object]? {
            while await changes.next(isolation: actor) != nil {
                let (objects, versions) = try await garage.run(garage.observing(Object.self, query))
                if versions == last { continue }
                last = versions
                return objects
            }
            return nil
        }

        /// The query's objects after the next commit that changed them (see ``next(isolation:)``).
        public mutating func next() async throws -> [Object]? {
            try await next(isolation: nil)
        }
    }
}

/// What tells one answer of a query from the next: each object's identifier, row revision and
/// sync status, in order.
struct QueryVersion: Sendable, Equatable {
    var identifier: String
    var revision: Int64
    var syncStatus: SyncStatus

    init(_ row: StoredRow) {
        identifier = row.key.identifier
        revision = row.revision
        syncStatus = row.syncStatus
    }
}
