import Foundation
import GarageLiteCore

// A query's objects as an asynchronous sequence, read a page at a time.
extension Garage {
    /// The objects `query` matches, one at a time, read a page of `pageSize` at a time
    /// (`retrievePage(_:after:)`), so that a large answer is never held whole.
    ///
    /// ```swift
    /// for try await note in garage.objects(matching: Query(Note.self).sorted(by: Field("title"))) {
    ///     export(note)
    /// }
    /// ```
    ///
    /// Each page is read from a snapshot of its own, after the last object of the page before,
    /// so that writes meanwhile neither repeat an object nor skip one that was there throughout
    /// (see ``QueryCursor``). The query's limit, if any, bounds the whole sequence. The objects
    /// need not be `Sendable`: each page is retrieved on the actor that iterates.
    public func objects<T: Decodable & SendableMetatype>(matching query: Query<T>,
                                                          pageSize: Int = Garage.defaultQueryPageSize) -> QueryResults<T> {
        QueryResults(garage: self, query: query, pageSize: max(1, pageSize))
    }
}

/// A query's objects, read a page at a time: see ``Garage/objects(matching:pageSize:)``.
public struct QueryResults<Object: Decodable & SendableMetatype>: AsyncSequence, Sendable {
    public typealias Element = Object
    /// What iterating throws: the errors of `retrievePage(_:after:)`.
    public typealias Failure = any Error

    let garage: Garage
    let query: Query<Object>
    let pageSize: Int

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(garage: garage, query: query, pageSize: pageSize, remaining: query.limit)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let garage: Garage
        let query: Query<Object>
        let pageSize: Int
        /// How many objects the query's limit still allows; `nil` without a limit.
        var remaining: Int?
        var page: [Object] = []
        var position = 0
        var cursor: QueryCursor?
        var isLastPage = false

        init(garage: Garage, query: Query<Object>, pageSize: Int, remaining: Int?) {
            self.garage = garage
            self.query = query
            self.pageSize = pageSize
            self.remaining = remaining
        }

        /// The next object, or `nil` after the last; reads the next page when this one is done.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Object? {
            while position == page.count {
                if isLastPage || remaining == 0 { return nil }
                let size = Swift.min(pageSize, remaining ?? .max)
                let read = try await garage.retrievePage(query.limit(size), after: cursor)
                page = read.objects
                position = 0
                cursor = read.next
                isLastPage = read.next == nil
                remaining = remaining.map { $0 - read.objects.count }
            }
            defer { position += 1 }
            return page[position]
        }

        /// The next object (see ``next(isolation:)``).
        public mutating func next() async throws -> Object? {
            try await next(isolation: nil)
        }
    }
}
