// The work behind the entry points of Garage+Queries.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    func readingRecords(_ query: Query<ObjectRecord>) throws -> StoreWork<[StoredRow]> {
        guard let typeName = query.recordTypeName else {
            throw GarageError.invalidQuery(typeName: "ObjectRecord", query: Self.describe(query),
                                           reason: "a query of records names the stored type: Query(recordsOf: \"Note\")")
        }
        if typeName.containsNUL {
            throw GarageError.invalidQuery(typeName: typeName, query: Self.describe(query),
                                           reason: "the type name holds the character U+0000 (NUL), which no stored type name holds")
        }
        let rowQuery = RowQuery(query, typeName: typeName)
        // Without the app's type, only what any query can't ask (a text holding NUL, a predicate nested too deep).
        if let problem = rowQuery.problem(in: .unknown) {
            throw GarageError.invalidQuery(typeName: typeName, query: Self.describe(query), reason: problem)
        }
        if configuration().encryption.delegate != nil, rowQuery.readsContent {
            let what = rowQuery.fields.first.map { "their property \($0)" } ?? "their text"
            throw GarageError.invalidQuery(typeName: typeName, query: Self.describe(query),
                                           reason: "the store's objects are encrypted, so it can't read \(what)")
        }
        return reading("query \(typeName)") { view in
            try view.identifiers(matching: rowQuery).compactMap { identifier in
                try view.statements.record(ObjectKey(typeName: typeName, identifier: identifier))?.get()
            }
        }
    }

    func retrieving<T: Decodable & SendableMetatype>(_ query: Query<T>) throws -> StoreWork<[T]> {
        let rowQuery = try self.rowQuery(query)
        let configuration = configuration()
        return reading("query \(rowQuery.typeName)") { view in
            let decoder = configuration.decoder(view)
            return try view.rows(matching: rowQuery, for: .content).map { try configuration.decode(T.self, $0, with: decoder) }
        }
    }

    func retrievingPage<T: Decodable & SendableMetatype>(_ query: Query<T>, after cursor: QueryCursor?) throws

        -> StoreWork<QueryPage<T>> {
        var rowQuery = try self.rowQuery(query.limit == nil ? query.limit(Self.defaultQueryPageSize) : query)
        let orders = rowQuery.ordersText
        if rowQuery.sortsByRelevance {
            throw GarageError.invalidQuery(
                typeName: rowQuery.typeName, query: Self.describe(query),
                reason: "a query sorted by relevance has no pages: relevance changes as any object of the type changes, so "
                    + "pages after a cursor would repeat or skip objects; retrieve it with a limit")
        }
        if let cursor {
            guard cursor.orders == orders, cursor.values.count == rowQuery.sortOrders.count else {
                throw GarageError.invalidQuery(typeName: rowQuery.typeName, query: Self.describe(query),
                                               reason: "the cursor is of a query with other orders: pass the cursor of this query's last page")
            }
            rowQuery.after = (cursor.values, cursor.identifier)
        }
        let configuration = configuration()
        let readsFields = rowQuery.sortOrders.contains { if case .field = $0.key { true } else { false } }
        let pageQuery = rowQuery
        return reading("query \(pageQuery.typeName)") { view in
            let rowQuery = pageQuery
            let decoder = configuration.decoder(view)
            let rows = try view.rows(matching: rowQuery, for: .all)
            var page = QueryPage<T>(objects: try rows.map { try configuration.decode(T.self, $0, with: decoder) }, next: nil)
            if let last = rows.last, rows.count == rowQuery.limit {
                let json = readsFields ? try JSONReader.parse(last.data) : .null
                page.next = QueryCursor(orders: orders, values: rowQuery.sortValues(json, modificationDate: last.modificationDate),
                                        identifier: last.key.identifier)
            }
            return page
        }
    }

    func counting<T: Decodable>(_ query: Query<T>) throws -> StoreWork<Int> {
        let rowQuery = try self.rowQuery(query)
        return reading("count a query of \(rowQuery.typeName)") { view in try view.count(matching: rowQuery) }
    }

    func listing<T: Decodable>(_ query: Query<T>) throws -> StoreWork<[String]> {
        let rowQuery = try self.rowQuery(query)
        return reading("query \(rowQuery.typeName)") { view in try view.identifiers(matching: rowQuery) }
    }

    /// `query` as the store answers it, once checked against what `T`'s JSON can hold
    /// (``QueryShape``); a garage that encrypts its objects can filter and sort by what the
    /// rows hold beside them only.
    func rowQuery<T: Decodable>(_ query: Query<T>) throws -> RowQuery {
        let typeName = try storedTypeName(T.self, listing: "query")
        let rowQuery = RowQuery(query, typeName: typeName)
        let shape = QueryShape.of(T.self)
        let strategy = configuration().dateEncodingStrategy
        if let problem = rowQuery.problem(in: shape) ?? rowQuery.dateProblem(in: shape, as: strategy) {
            throw GarageError.invalidQuery(typeName: typeName, query: Self.describe(query), reason: problem)
        }
        if rowQuery.sortsByRelevance, rowQuery.textSearch == nil {
            throw GarageError.invalidQuery(typeName: typeName, query: Self.describe(query),
                                           reason: "an order by relevance needs a text search: search(_:) or .textMatches(_:)")
        }
        if configuration().dataEncryptionDelegate != nil, rowQuery.readsContent {
            let what = rowQuery.fields.first.map { "their property \($0)" } ?? "their text"
            throw GarageError.invalidQuery(
                typeName: typeName, query: Self.describe(query),
                reason: "the garage encrypts its objects, so the store can't read \(what) (README, "
                    + "\"Querying\"); a query of an encrypted garage filters by sync status and sorts by modification "
                    + "date only")
        }
        return try rowQuery.writingDates(in: shape, as: strategy)
    }

    /// The query as an error shows it: its predicate and its orders.
    static func describe<T>(_ query: Query<T>) -> String {
        var text = query.predicate.node == .all ? "of every object" : "where \(query.predicate)"
        let orders = query.sortOrders.map { sort -> String in
            let key: String
            switch sort.key {
            case .field(let field): key = "\(field)"
            case .modificationDate: key = "modification date"
            case .relevance: key = "relevance"
            }
            return key + (sort.order == .ascending ? "" : " descending")
        }
        if !orders.isEmpty { text += " sorted by " + orders.joined(separator: ", ") }
        return text
    }

}
