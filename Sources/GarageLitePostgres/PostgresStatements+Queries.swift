import Foundation
import GarageLite
import PostgresNIO

// Queries (`RowQuery`) in SQL over the objects' JSON, read as `json` (which keeps what `jsonb`
// refuses) once per row: each condition reads as the rule (`RowQuery+Evaluation`) says, held
// to it by `QueryRuleTests` on this engine. A comparison matches only a value of its own kind
// (every cast is behind a CASE on the kind), strings compare in the "C" collation (by bytes),
// numbers as doubles, and every condition is true or false, never NULL.
extension PostgresStatements {
    func identifiers(matching query: RowQuery) throws -> [String] {
        var compiled = PostgresQueryCompiler(schema: schema, objects: objects, query: query)
        compiled.appendOrderAndLimit()
        if compiled.isTooLarge { return try identifiersByRule(matching: query) }
        return try run(compiled.statement).rows.map { try $0.decode(String.self) }
    }

    /// An expression index over the type's live rows: for each field, the rank and the value of
    /// each kind the query SQL compares and sorts on (``PostgresQueryCompiler/sortExpressions(_:table:)``),
    /// then the identifier, so that the index answers both a comparison and an order by its
    /// fields, ties in identifier order.
    func createQueryIndex(_ definition: QueryIndexDefinition) throws {
        if definition.isText { return try createTextIndex(definition) }
        let expressions = (definition.fields.flatMap { PostgresQueryCompiler.sortExpressions($0, table: "") }.map { "(\($0))" }
            + ["identifier"]).joined(separator: ", ")
        try run(PostgresQuery(unsafeSQL: """
            CREATE INDEX IF NOT EXISTS \(definition.name) ON \(objects) (\(expressions))
            WHERE type = \(PostgresQueryCompiler.literal(definition.typeName)) AND NOT is_deleted
            """))
    }

    func dropQueryIndex(_ definition: QueryIndexDefinition) throws {
        try run(PostgresQuery(unsafeSQL: "DROP INDEX IF EXISTS \(schema).\(definition.name)"))
    }

    /// PostgreSQL's plan of the statement that answers `query` (`EXPLAIN`), one line a node:
    /// what tests read to see an index used.
    func queryPlan(matching query: RowQuery) throws -> [String] {
        var compiled = PostgresQueryCompiler(schema: schema, objects: objects, query: query, selecting: "o.identifier", explaining: true)
        compiled.appendOrderAndLimit()
        return try run(compiled.statement).rows.map { try $0.decode(String.self) }
    }

    func count(matching query: RowQuery) throws -> Int {
        var counted = query
        counted.sortOrders = []
        counted.limit = nil
        let compiled = PostgresQueryCompiler(schema: schema, objects: objects, query: counted, selecting: "count(*)")
        if compiled.isTooLarge { return try identifiersByRule(matching: counted).count }
        guard let row = try run(compiled.statement).rows.first else { return 0 }
        return Int(try row.decode(Int64.self))
    }
}

/// Writes a ``RowQuery`` as one PostgreSQL statement, its values bound.
struct PostgresQueryCompiler {
    private var sql = PostgresQuery.StringInterpolation(literalCapacity: 512, interpolationCount: 8)
    private let rowQuery: RowQuery
    /// The garage's schema, where its text function is (``PostgresStatements/createTextIndex(_:)``).
    private let schema: String

    /// `SELECT selecting FROM` the type's live rows, each row's JSON parsed once (`j`), `WHERE`
    /// the query's condition.
    init(schema: String, objects: String, query: RowQuery, selecting: String = "o.identifier", explaining: Bool = false) {
        rowQuery = query
        self.schema = schema
        sql.appendLiteral("\(explaining ? "EXPLAIN " : "")SELECT \(selecting) FROM \(objects) AS o CROSS JOIN LATERAL (SELECT o.data::json AS j OFFSET 0) AS x ")
        // The type a literal, as an index's WHERE writes it (createQueryIndex).
        sql.appendLiteral("WHERE o.type = \(Self.literal(query.typeName)) AND NOT o.is_deleted AND ")
        append(query.predicate)
        appendIndexedTerms()
        if let position = query.after {
            sql.appendLiteral(" AND (")
            appendAfter(query.sortOrders[...], position.values[...], position.identifier)
            sql.appendLiteral(")")
        }
    }

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// What an order by `field` sorts on, as an index of the field holds it: the rank of its
    /// value's kind (0 missing or null, 1 a boolean, 2 a number, 3 a string, 4 the rest: the
    /// rule's `SortValue.rank`), then the value as a boolean, as a double, as text in the "C"
    /// collation (each NULL for another kind). Read from the row's data as `json`, NULL in an
    /// encrypted row, whose data is no JSON (an index on a garage encrypted later keeps
    /// working). `table` is the alias of the table and a dot, or nothing.
    static func sortExpressions(_ field: Field, table: String) -> [String] {
        let path = "ARRAY[" + field.path.map(literal).joined(separator: ", ") + "]::text[]"
        let value = "(CASE WHEN NOT \(table)is_encrypted THEN \(table)data END)::json #> \(path)"
        let text = "(CASE WHEN NOT \(table)is_encrypted THEN \(table)data END)::json #>> \(path)"
        return [
            "CASE COALESCE(json_typeof(\(value)), 'null') WHEN 'null' THEN 0 WHEN 'boolean' THEN 1 WHEN 'number' THEN 2 "
                + "WHEN 'string' THEN 3 ELSE 4 END",
            "CASE WHEN json_typeof(\(value)) = 'boolean' THEN (\(text))::boolean END",
            "CASE WHEN json_typeof(\(value)) = 'number' THEN (\(text))::float8 END",
            "(CASE WHEN json_typeof(\(value)) = 'string' THEN \(text) END) COLLATE \"C\"",
        ]
    }

    /// The query's required comparisons (``RowQuery/requiredComparisons``), bare, on the
    /// expressions an index of their field holds: the rank of the value's kind, the values of
    /// the kinds before it NULL, then the value (each equivalent to the comparison).
    private mutating func appendIndexedTerms() {
        for (field, comparison, value) in rowQuery.requiredComparisons {
            // The expressions are the rank, then the value of each kind in rank order.
            guard let rank = value.rank else { continue }
            let expressions = Self.sortExpressions(field, table: "o.")
            sql.appendLiteral(" AND (\(expressions[0])) = \(rank)")
            for earlier in 1..<rank { sql.appendLiteral(" AND (\(expressions[earlier])) IS NULL") }
            sql.appendLiteral(" AND (\(expressions[rank])) \(comparison == .equal ? "=" : comparison.rawValue) ")
            appendOperand(value)
        }
    }

    /// The rank an order sorts on first: missing or null, boolean, number, string, the rest.
    /// (Pages of a relevance order are refused: `Garage.retrievePage`.)
    private mutating func appendRank(_ key: QuerySort.Key) {
        guard case .field(let field) = key else {
            // A date is a number (the rank the rule's sort value of a date has).
            sql.appendLiteral("\(RowQuery.SortValue.number(0).rank)")
            return
        }
        sql.appendLiteral("CASE COALESCE(json_typeof(x.j #> ")
        appendPath(field)
        sql.appendLiteral("), 'null') WHEN 'null' THEN 0 WHEN 'boolean' THEN 1 WHEN 'number' THEN 2 WHEN 'string' THEN 3 ELSE 4 END")
    }

    /// The value an order sorts on within a rank of `value`'s kind.
    private mutating func appendSortValue(_ key: QuerySort.Key, _ value: RowQuery.SortValue) {
        guard case .field(let field) = key else {
            sql.appendLiteral("o.modification_date")
            return
        }
        let (kind, cast): (String, String)
        switch value {
        case .bool: (kind, cast) = ("boolean", "::boolean")
        case .number: (kind, cast) = ("number", "::float8")
        default: (kind, cast) = ("string", " COLLATE \"C\"")
        }
        sql.appendLiteral("CASE WHEN json_typeof(x.j #> ")
        appendPath(field)
        sql.appendLiteral(") = '\(kind)' THEN (x.j #>> ")
        appendPath(field)
        sql.appendLiteral(")\(cast) END")
    }

    private mutating func appendSortOperand(_ value: RowQuery.SortValue) -> Bool {
        switch value {
        case .bool(let flag): sql.appendInterpolation(flag); sql.appendLiteral("::boolean")
        case .number(let number): sql.appendInterpolation(number); sql.appendLiteral("::float8")
        case .string(let string): sql.appendInterpolation(string); sql.appendLiteral("::text COLLATE \"C\"")
        case .none, .other: return false
        }
        return true
    }

    /// The rows after a cursor's position in the orders: after it on the first order, or level
    /// with it there and after it on the next, and so on; then by identifier (the rule's
    /// `precedes`).
    private mutating func appendAfter(_ orders: ArraySlice<QuerySort>, _ values: ArraySlice<RowQuery.SortValue>,
                                      _ identifier: String) {
        guard let sort = orders.first, let value = values.first else {
            sql.appendLiteral("o.identifier > ")
            sql.appendInterpolation(identifier)
            sql.appendLiteral("::text COLLATE \"C\"")
            return
        }
        let later = sort.order == .ascending ? ">" : "<"
        let rank = Int64(value.rank)
        sql.appendLiteral("COALESCE(")
        appendRank(sort.key)
        sql.appendLiteral(" \(later) ")
        sql.appendInterpolation(rank)
        sql.appendLiteral(", false)")
        var hasValue = false
        if case .none = value {} else if case .other = value {} else { hasValue = true }
        if hasValue {
            // Within the cursor's rank, every row's value is of the cursor's kind.
            sql.appendLiteral(" OR COALESCE(")
            appendRank(sort.key)
            sql.appendLiteral(" = ")
            sql.appendInterpolation(rank)
            sql.appendLiteral(" AND ")
            appendSortValue(sort.key, value)
            sql.appendLiteral(" \(later) ")
            _ = appendSortOperand(value)
            sql.appendLiteral(", false)")
        }
        sql.appendLiteral(" OR (COALESCE(")
        appendRank(sort.key)
        sql.appendLiteral(" = ")
        sql.appendInterpolation(rank)
        if hasValue {
            sql.appendLiteral(" AND ")
            appendSortValue(sort.key, value)
            sql.appendLiteral(" = ")
            _ = appendSortOperand(value)
        }
        sql.appendLiteral(", false) AND (")
        appendAfter(orders.dropFirst(), values.dropFirst(), identifier)
        sql.appendLiteral("))")
    }

    /// The statement.
    var statement: PostgresQuery { PostgresQuery(stringInterpolation: sql) }

    /// The most parameters a statement binds: PostgreSQL's protocol counts them in 16 bits, and
    /// a user's predicate of tens of thousands of conditions binds more. Such a query is
    /// answered by the rule (``PostgresStatements/identifiers(matching:)``).
    static let maximumBinds = 30_000

    /// Whether the statement binds more than ``maximumBinds`` parameters.
    var isTooLarge: Bool { statement.binds.count > Self.maximumBinds }

    /// Appends the query's orders (ties in identifier order) and its limit.
    mutating func appendOrderAndLimit() {
        sql.appendLiteral(" ORDER BY ")
        // First the fields the predicate pins to one value (`==`), in its order, unless one is
        // the first order's field: sorting on them changes nothing, each being one value in
        // every match, but it lets an index on them and then on the order's field give the
        // order. PostgreSQL takes a column compared with `=` as constant, and leaves it out of
        // the order it needs; not a column pinned by `IS NULL` (the other kinds' values of a
        // pinned field), after which it would sort every match (a feed's page after a position
        // read the rest of the feed). Named here, those columns are read in the index's order.
        if let first = rowQuery.sortOrders.first, case .field(let sorted) = first.key {
            let direction = first.order == .ascending ? "ASC" : "DESC"
            for (field, comparison, value) in rowQuery.requiredComparisons
            where comparison == .equal && field != sorted && value.rank != nil {
                for expression in Self.sortExpressions(field, table: "o.") {
                    sql.appendLiteral("\(expression) \(direction), ")
                }
            }
        }
        for sort in rowQuery.sortOrders {
            let direction = sort.order == .ascending ? "ASC" : "DESC"
            switch sort.key {
            case .modificationDate:
                sql.appendLiteral("o.modification_date \(direction), ")
            case .relevance:
                // NULL (no match) ranks first, as the rule's missing values do.
                if let textIndex = rowQuery.textIndex, let search = rowQuery.textSearch, let matches = Self.textMatches(search) {
                    let vector = Self.textVector(textIndex, schema: schema, table: "o.")
                    sql.appendLiteral("CASE WHEN ")
                    appendTextMatch(vector, matches)
                    sql.appendLiteral(" THEN ")
                    for (index, match) in matches.enumerated() {
                        sql.appendLiteral(index == 0 ? "ts_rank(\(vector), to_tsquery('simple', " : " + ts_rank(\(vector), to_tsquery('simple', ")
                        sql.appendInterpolation(match)
                        sql.appendLiteral("))")
                    }
                    sql.appendLiteral(" END \(direction) NULLS \(sort.order == .ascending ? "FIRST" : "LAST"), ")
                }
            case .field(let field):
                // The expressions an index of the field holds, so that the index gives the order.
                for expression in Self.sortExpressions(field, table: "o.") {
                    sql.appendLiteral("\(expression) \(direction), ")
                }
            }
        }
        sql.appendLiteral("o.identifier")
        if let limit = rowQuery.limit {
            sql.appendLiteral(" LIMIT ")
            sql.appendInterpolation(Int64(limit))
        }
    }

    private mutating func appendPath(_ field: Field) {
        sql.appendInterpolation(field.path)
        sql.appendLiteral("::text[]")
    }

    /// Appends `x.j #> path`, the value at `field` as `json` (NULL when missing).
    private mutating func appendValue(_ field: Field) {
        sql.appendLiteral("(x.j #> ")
        appendPath(field)
        sql.appendLiteral(")")
    }

    private mutating func append(_ node: QueryPredicate.Node) {
        switch node {
        case .all:
            sql.appendLiteral("true")
        case .syncStatus(let status):
            sql.appendLiteral("o.sync_status = ")
            sql.appendInterpolation(Int64(status.rawValue))
        case .references(let toType, let toIdentifier):
            sql.appendLiteral("o.identifier IN (SELECT from_identifier FROM \(schema).garage_reference WHERE to_type = ")
            sql.appendInterpolation(toType)
            sql.appendLiteral(" AND to_identifier = ")
            sql.appendInterpolation(toIdentifier)
            sql.appendLiteral(" AND from_type = ")
            sql.appendInterpolation(rowQuery.typeName)
            sql.appendLiteral(")")
        case .referenceMatches:
            sql.appendLiteral("false")      // answered as `referenceAmong` first (StoreView.resolvingReferences)
        case .referenceAmong(let field, let identifiers):
            sql.appendLiteral("COALESCE(CASE json_typeof")
            appendValue(field)
            sql.appendLiteral(" WHEN 'string' THEN (x.j #>> ")
            appendPath(field)
            sql.appendLiteral(") = ANY(")
            sql.appendInterpolation(identifiers)
            sql.appendLiteral("::text[]) WHEN 'array' THEN EXISTS (SELECT 1 FROM json_array_elements(CASE WHEN json_typeof")
            appendValue(field)
            sql.appendLiteral(" = 'array' THEN x.j #> ")
            appendPath(field)
            sql.appendLiteral(" END) AS e(element) WHERE json_typeof(e.element) = 'string' AND (e.element #>> '{}') = ANY(")
            sql.appendInterpolation(identifiers)
            sql.appendLiteral("::text[])) END, false)")
        case .textMatches(let search):
            guard let textIndex = rowQuery.textIndex, let matches = Self.textMatches(search) else {
                sql.appendLiteral("false")
                return
            }
            appendTextMatch(Self.textVector(textIndex, schema: schema, table: "o."), matches)
        case .compare(let field, let comparison, let value):
            let operation = comparison == .equal ? "=" : comparison.rawValue
            sql.appendLiteral("COALESCE(")
            appendTyped(field, value, element: false)
            sql.appendLiteral(" \(operation) ")
            appendOperand(value)
            sql.appendLiteral(", false)")
        case .isNull(let field):
            sql.appendLiteral("COALESCE(json_typeof")
            appendValue(field)
            sql.appendLiteral(", 'null') = 'null'")
        case .hasPrefix(let field, let prefix):
            sql.appendLiteral("COALESCE(starts_with(CASE WHEN json_typeof")
            appendValue(field)
            sql.appendLiteral(" = 'string' THEN x.j #>> ")
            appendPath(field)
            sql.appendLiteral(" END, ")
            sql.appendInterpolation(prefix)
            sql.appendLiteral("), false)")
        case .containsText(let field, let text):
            sql.appendLiteral("COALESCE(strpos(lower(CASE WHEN json_typeof")
            appendValue(field)
            sql.appendLiteral(" = 'string' THEN x.j #>> ")
            appendPath(field)
            sql.appendLiteral(" END COLLATE \"C\"), lower(")
            sql.appendInterpolation(text)
            sql.appendLiteral("::text COLLATE \"C\")) > 0, false)")
        case .arrayContains(let field, let value):
            guard value != .null else {
                sql.appendLiteral("false")     // null equals no element, as no property
                return
            }
            sql.appendLiteral("COALESCE(json_typeof")
            appendValue(field)
            sql.appendLiteral(" = 'array' AND EXISTS (SELECT 1 FROM json_array_elements(CASE WHEN json_typeof")
            appendValue(field)
            sql.appendLiteral(" = 'array' THEN x.j #> ")
            appendPath(field)
            sql.appendLiteral(" END) AS e(element) WHERE ")
            appendTyped(nil, value, element: true)
            sql.appendLiteral(" = ")
            appendOperand(value)
            sql.appendLiteral("), false)")
        case .and(let list):
            // PostgreSQL makes a chain one list (never a tree as deep as the chain).
            appendJoined(list, "AND")
        case .or(let list):
            if let (field, values) = QueryPredicate.equalities(list) { return appendAmong(field, values) }
            appendJoined(list, "OR")
        case .not(let inner):
            sql.appendLiteral("NOT (")
            append(inner)
            sql.appendLiteral(")")
        case .refused:
            sql.appendLiteral("false")     // refused before any store answers (`RowQuery.problem(in:)`)
        }
    }

    private mutating func appendJoined(_ list: [QueryPredicate.Node], _ operation: String) {
        sql.appendLiteral("(")
        for (index, node) in list.enumerated() {
            if index > 0 { sql.appendLiteral(" \(operation) ") }
            append(node)
        }
        sql.appendLiteral(")")
    }

    /// An `isIn(_:)`: `field` equals one of `values`, each kind's values bound as one array
    /// (whatever their number, a parameter a kind).
    private mutating func appendAmong(_ field: Field, _ values: [QueryValue.Content]) {
        var strings: [String] = [], numbers: [Double] = [], booleans: [Bool] = []
        for value in values {
            switch value {
            case .string(let string): strings.append(string)
            case .number(let number): numbers.append(number)
            case .bool(let flag): booleans.append(flag)
            case .null: continue
            }
        }
        var terms = 0
        sql.appendLiteral("(")
        func kind(_ name: String, cast: String, _ bind: (inout Self) -> Void) {
            if terms > 0 { sql.appendLiteral(" OR ") }
            terms += 1
            sql.appendLiteral("COALESCE(CASE WHEN json_typeof")
            appendValue(field)
            sql.appendLiteral(" = '\(name)' THEN (x.j #>> ")
            appendPath(field)
            sql.appendLiteral(")\(cast) = ANY(")
            bind(&self)
            sql.appendLiteral(") END, false)")
        }
        if !strings.isEmpty { kind("string", cast: " COLLATE \"C\"") { $0.sql.appendInterpolation(strings); $0.sql.appendLiteral("::text[]") } }
        if !numbers.isEmpty { kind("number", cast: "::float8") { $0.sql.appendInterpolation(numbers); $0.sql.appendLiteral("::float8[]") } }
        if !booleans.isEmpty { kind("boolean", cast: "::boolean") { $0.sql.appendInterpolation(booleans); $0.sql.appendLiteral("::boolean[]") } }
        if terms == 0 { sql.appendLiteral("false") }
        sql.appendLiteral(")")
    }

    /// `vector` matches every one of `matches` (``textMatches(_:)``).
    private mutating func appendTextMatch(_ vector: String, _ matches: [String]) {
        sql.appendLiteral("(")
        for (index, match) in matches.enumerated() {
            sql.appendLiteral(index == 0 ? "\(vector) @@ to_tsquery('simple', " : " AND \(vector) @@ to_tsquery('simple', ")
            sql.appendInterpolation(match)
            sql.appendLiteral(")")
        }
        sql.appendLiteral(")")
    }

    /// The value at `field` (or the array element `e.element`) as SQL of `value`'s kind, NULL
    /// when it holds another kind.
    private mutating func appendTyped(_ field: Field?, _ value: QueryValue.Content, element: Bool) {
        let (kind, cast): (String, String)
        switch value {
        case .string: (kind, cast) = ("string", " COLLATE \"C\"")
        case .number: (kind, cast) = ("number", "::float8")
        case .bool: (kind, cast) = ("boolean", "::boolean")
        case .null: (kind, cast) = ("null", "")
        }
        if element {
            sql.appendLiteral("CASE WHEN json_typeof(e.element) = '\(kind)' THEN (e.element #>> '{}')\(cast) END")
        } else if let field {
            sql.appendLiteral("CASE WHEN json_typeof")
            appendValue(field)
            sql.appendLiteral(" = '\(kind)' THEN (x.j #>> ")
            appendPath(field)
            sql.appendLiteral(")\(cast) END")
        }
    }

    private mutating func appendOperand(_ value: QueryValue.Content) {
        switch value {
        case .string(let string):
            sql.appendInterpolation(string)
            sql.appendLiteral("::text COLLATE \"C\"")
        case .number(let number):
            sql.appendInterpolation(number)
            sql.appendLiteral("::float8")
        case .bool(let bool):
            sql.appendInterpolation(bool)
            sql.appendLiteral("::boolean")
        case .null:
            sql.appendLiteral("NULL")
        }
    }
}
