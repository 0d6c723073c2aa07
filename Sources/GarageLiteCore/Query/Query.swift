/// A question about the objects of one type: which match a predicate, in what order, how
/// many. Retrieve its objects with `garage.retrieve(_:)`, count them with
/// `garage.count(_:)`, list their identifiers with `garage.identifiers(_:)`.
///
/// ```swift
/// let work = Query(Note.self)
///     .filter(Field("notebook") == "Work" && Field("tags").contains("urgent"))
///     .sorted(by: Field("title"))
///     .limit(20)
/// let notes = try garage.retrieve(work)
/// ```
///
/// A query names stored properties by their coding keys (``Field``). The store answers it
/// with SQL over the objects' JSON; the objects it returns are whole graphs, as
/// `garage.retrieve(_:identifier:)` builds them, read from one snapshot.
public struct Query<Object>: Sendable {
    /// What the objects must match (``QueryPredicate/all`` unless filtered).
    public private(set) var predicate: QueryPredicate = .all
    /// The orders, the first one first; ties are in identifier order.
    public private(set) var sortOrders: [QuerySort] = []
    /// The most objects the query returns; `nil`: every one.
    public private(set) var limit: Int?

    /// A query of every object of type `type`, in identifier order.
    public init(_ type: Object.Type) {}

    /// The stored type name of a query of records (``init(recordsOf:)``).
    package var recordTypeName: String?
    /// Whether the query is sorted by relevance when it has no orders of its own (``search(_:)``).
    package var ranksByRelevance = false

    /// The query, keeping only the objects that match `predicate` too.
    public func filter(_ predicate: QueryPredicate) -> Query {
        var query = self
        query.predicate = self.predicate.node == .all ? predicate : self.predicate && predicate
        return query
    }

    /// The query, sorted by `field` after its other orders (in `order`; objects without the
    /// property first when ascending, then booleans, numbers, strings, in that order).
    public func sorted(by field: Field, _ order: QuerySort.Order = .ascending) -> Query {
        var query = self
        query.sortOrders.append(QuerySort(key: .field(field), order: order))
        return query
    }

    /// The query, sorted by the date each object was last parked after its other orders.
    public func sortedByModificationDate(_ order: QuerySort.Order = .ascending) -> Query {
        var query = self
        query.sortOrders.append(QuerySort(key: .modificationDate, order: order))
        return query
    }

    /// The query, keeping the objects whose indexed text holds every word of `search`
    /// (``QueryPredicate/textMatches(_:)``), the most relevant first unless the query has
    /// orders of its own (`sorted(by:_:)`, …: then in those orders, and with pages).
    ///
    /// ```swift
    /// try garage.textIndex(Note.self, on: Field("title"), Field("body"))
    /// let hits = try garage.retrieve(Query(Note.self).search("milk bread").limit(20))
    /// ```
    public func search(_ search: String) -> Query {
        var query = filter(.textMatches(search))
        query.ranksByRelevance = true
        return query
    }

    /// The query, sorted by how well each object matches its text search after its other
    /// orders, the most relevant first (the engine's measure: SQLite's BM25, PostgreSQL's
    /// `ts_rank`). Its pages can't follow a cursor: relevance changes as objects change.
    public func sortedByRelevance() -> Query {
        var query = self
        query.sortOrders.append(QuerySort(key: .relevance, order: .descending))
        return query
    }

    /// The query, returning at most `count` objects.
    public func limit(_ count: Int) -> Query {
        var query = self
        query.limit = max(0, count)
        return query
    }
}

/// One order of a query: by a stored property or by the modification date.
public struct QuerySort: Sendable, Hashable {
    /// What is sorted on.
    public enum Key: Sendable, Hashable {
        /// A stored property.
        case field(Field)
        /// When the object was last parked.
        case modificationDate
        /// How well the object matches the query's text search (``Query/sortedByRelevance()``).
        case relevance
    }

    /// Ascending or descending.
    public enum Order: Sendable, Hashable {
        case ascending, descending
    }

    public var key: Key
    public var order: Order
}

/// A query as an engine answers it: the type's rows (by stored type name) that match, in order.
package struct RowQuery: Sendable {
    package var typeName: String
    package var predicate: QueryPredicate.Node
    package var sortOrders: [QuerySort]
    package var limit: Int?
    /// The type's text index, which the store reads when the predicate searches text.
    package var textIndex: QueryIndexDefinition?
    /// Where the rows start: after this position in the query's order (its sort values, then
    /// its identifier), for a page after the first (``QueryCursor``).
    package var after: (values: [SortValue], identifier: String)?

    package init<Object>(_ query: Query<Object>, typeName: String) {
        self.typeName = typeName
        predicate = query.predicate.node
        sortOrders = query.sortOrders.isEmpty && query.ranksByRelevance
            ? [QuerySort(key: .relevance, order: .descending)] : query.sortOrders
        limit = query.limit
    }

    package init(typeName: String, predicate: QueryPredicate, sortOrders: [QuerySort] = [], limit: Int? = nil) {
        self.typeName = typeName
        self.predicate = predicate.node
        self.sortOrders = sortOrders
        self.limit = limit
    }

    /// The stored properties the query reads (not the sync status, nor the dates).
    package var fields: [Field] {
        var fields: [Field] = []
        func collect(_ node: QueryPredicate.Node) {
            switch node {
            case .all, .syncStatus, .textMatches, .references: break
            case .compare(let field, _, _), .isNull(let field), .hasPrefix(let field, _), .containsText(let field, _),
                 .arrayContains(let field, _), .referenceMatches(let field, _, _), .referenceAmong(let field, _):
                fields.append(field)
            case .and(let list), .or(let list):
                if case .or = node, let (field, _) = QueryPredicate.equalities(list) {
                    fields.append(field)
                } else {
                    list.forEach(collect)
                }
            case .not(let inner): collect(inner)
            case .refused: break
            }
        }
        collect(predicate)
        for sort in sortOrders {
            if case .field(let field) = sort.key { fields.append(field) }
        }
        return fields
    }

    /// The search of the predicate's first text search, if it has one.
    package var textSearch: String? {
        func find(_ node: QueryPredicate.Node) -> String? {
            switch node {
            case .textMatches(let search): return search
            case .and(let list), .or(let list):
                for inner in list {
                    if let search = find(inner) { return search }
                }
                return nil
            case .not(let inner): return find(inner)
            default: return nil
            }
        }
        return find(predicate)
    }

    /// Whether the query reads what the objects hold (their properties or their text).
    package var readsContent: Bool { !fields.isEmpty || textSearch != nil }
}

extension Query where Object == ObjectRecord {
    /// A query of the records (``ObjectRecord``) of the objects stored under the type name
    /// `typeName`, for tools without the app's Swift types (the `garage` tool's `list --where`).
    /// Its fields are not checked against a type: a misspelled one matches nothing.
    ///
    /// ```swift
    /// let work = Query(recordsOf: "Note").filter(Field("tags").contains("work"))
    /// for record in try garage.records(matching: work) { print(record.identifier) }
    /// ```
    public init(recordsOf typeName: String) {
        recordTypeName = typeName
    }
}
