import Foundation
import GRDB

// Queries (`RowQuery`) in SQL over the objects' JSON: `json_type` and `json_extract` with
// the path bound as a parameter. Each condition reads as its rule (`RowQuery+Evaluation`)
// says, held to it by `QueryRuleTests`: a comparison matches only a value of its own kind,
// strings compare by their bytes (the column's BINARY collation), every condition is 0 or 1
// (never NULL, so that NOT negates it).
extension SQLiteConnection {
    func identifiers(matching query: RowQuery) throws -> [String] {
        guard let (sql, arguments) = SQLiteQuery.identifiersStatement(query) else { return try identifiersByRule(matching: query) }
        return try readingJSON(query) {
            try String.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments))
        }
    }

    func count(matching query: RowQuery) throws -> Int {
        guard let compiled = SQLiteQuery(query) else { return try identifiersByRule(matching: query).count }
        let sql = "SELECT COUNT(*) FROM garage_object WHERE \(compiled.rows) AND \(compiled.condition)"
        return try readingJSON(query) {
            try Int.fetchOne(db.cachedStatement(sql: sql), arguments: StatementArguments(compiled.arguments)) ?? 0
        }
    }

    /// An expression index over the type's live rows, on the expressions the query SQL's
    /// conditions compare (``SQLiteQuery/indexedExpression(_:)``).
    func createQueryIndex(_ definition: QueryIndexDefinition) throws {
        let expressions = definition.fields.map(SQLiteQuery.indexedExpression).joined(separator: ", ")
        try db.execute(sql: """
            CREATE INDEX IF NOT EXISTS "\(definition.name)" ON garage_object (\(expressions))
            WHERE type = \(SQLiteQuery.literal(definition.typeName)) AND isDeleted = 0
            """)
        // Without statistics, SQLite's planner rates the primary key's (type = ?) as good as
        // the new index: its statistics tell it how few rows share a value.
        try db.execute(sql: "ANALYZE \"\(definition.name)\"")
    }

    func dropQueryIndex(_ definition: QueryIndexDefinition) throws {
        try db.execute(sql: "DROP INDEX IF EXISTS \"\(definition.name)\"")
    }

    /// Runs `body`; when SQLite finds a row's JSON malformed (which fails the whole statement),
    /// answers by the rule instead, which throws the error that names the row.
    private func readingJSON<T>(_ query: RowQuery, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.message?.contains("malformed JSON") == true {
            _ = try identifiersByRule(matching: query)
            throw error
        }
    }
}

/// A ``RowQuery`` in SQLite's SQL: its condition and its arguments, its orderings and theirs.
struct SQLiteQuery {
    var condition = ""
    var arguments: [(any DatabaseValueConvertible)?] = []
    var orderings: [String] = []
    var orderingArguments: [(any DatabaseValueConvertible)?] = []

    /// `nil` when a key can't be written in a JSON path (it holds a double quote): the rule
    /// answers that query.
    /// The rows a query reads: the live rows of its type, written as an index's `WHERE` is
    /// (the type a literal), so that SQLite may read an index of the type (``createQueryIndex``).
    var rows = ""

    /// The statement of the identifiers `query` matches, in its order, and its arguments.
    static func identifiersStatement(_ query: RowQuery) -> (sql: String, arguments: [(any DatabaseValueConvertible)?])? {
        guard let compiled = SQLiteQuery(query) else { return nil }
        var sql = "SELECT identifier FROM garage_object WHERE \(compiled.rows) AND \(compiled.condition)"
        sql += " ORDER BY " + (compiled.orderings + ["identifier"]).joined(separator: ", ")
        var arguments = compiled.arguments + compiled.orderingArguments
        if let limit = query.limit {
            sql += " LIMIT ?"
            arguments.append(limit)
        }
        return (sql, arguments)
    }

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// The value at `field`, as an index orders it and a condition compares it; NULL in an
    /// encrypted row, whose data is no JSON (an index on a garage encrypted later keeps working).
    static func indexedExpression(_ field: Field) -> String {
        "json_extract(CASE WHEN isEncrypted = 0 THEN data END, \(literal(path(field))))"
    }

    init?(_ query: RowQuery) {
        guard query.fields.allSatisfy({ $0.path.allSatisfy { !$0.contains("\"") } }) else { return nil }
        rows = "type = \(Self.literal(query.typeName)) AND isDeleted = 0"
        condition = compile(query.predicate)
        for (field, comparison, value) in query.requiredComparisons {
            let bound: (any DatabaseValueConvertible)?
            switch value {
            case .string(let string): bound = string
            case .number(let number): bound = number
            case .bool(let flag): bound = flag ? 1 : 0
            case .null: continue
            }
            condition += " AND \(Self.indexedExpression(field)) \(comparison == .equal ? "=" : comparison.rawValue) ?"
            arguments.append(bound)
        }
        if let position = query.after {
            let after = Self.after(query.sortOrders[...], position.values[...], position.identifier)
            condition = "(\(condition)) AND (\(after.sql))"
            arguments += after.arguments
        }
        for sort in query.sortOrders {
            let direction = sort.order == .ascending ? "ASC" : "DESC"
            switch sort.key {
            case .modificationDate:
                orderings.append("modificationDate \(direction)")
            case .field(let field):
                let path = Self.path(field)
                orderings.append("""
                    CASE COALESCE(json_type(data, ?), 'null') WHEN 'null' THEN 0 WHEN 'true' THEN 1 WHEN 'false' THEN 1 \
                    WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 ELSE 4 END \(direction)
                    """)
                orderings.append("""
                    CASE WHEN json_type(data, ?) IN ('true', 'false', 'integer', 'real', 'text') \
                    THEN json_extract(data, ?) END \(direction)
                    """)
                orderingArguments += [path, path, path]
            }
        }
    }

    /// `$."key"."key"`: every key quoted, so that any key without a double quote is read as it is.
    static func path(_ field: Field) -> String {
        "$" + field.path.map { ".\"\($0)\"" }.joined()
    }

    private mutating func compile(_ node: QueryPredicate.Node) -> String {
        switch node {
        case .all: return "1"
        case .syncStatus(let status):
            arguments.append(status.rawValue)
            return "syncStatus = ?"
        case .compare(let field, let comparison, let value):
            let path = Self.path(field)
            let operation = comparison == .equal ? "=" : comparison.rawValue
            arguments += [path, path]
            let kinds: String
            switch value {
            case .string(let string):
                kinds = "'text'"
                arguments.append(string)
            case .number(let number):
                kinds = "'integer', 'real'"
                arguments.append(number)
            case .bool(let bool):
                kinds = "'true', 'false'"
                arguments.append(bool ? 1 : 0)
            case .null:
                return "0"
            }
            return "COALESCE(json_type(data, ?) IN (\(kinds)) AND json_extract(data, ?) \(operation) ?, 0)"
        case .isNull(let field):
            arguments.append(Self.path(field))
            return "COALESCE(json_type(data, ?), 'null') = 'null'"
        case .hasPrefix(let field, let prefix):
            let path = Self.path(field)
            arguments += [path, path, prefix, prefix]
            return "COALESCE(json_type(data, ?) = 'text' AND substr(json_extract(data, ?), 1, length(?)) = ?, 0)"
        case .containsText(let field, let text):
            let path = Self.path(field)
            arguments += [path, path, text]
            return "COALESCE(json_type(data, ?) = 'text' AND instr(lower(json_extract(data, ?)), lower(?)) > 0, 0)"
        case .arrayContains(let field, let value):
            let path = Self.path(field)
            let element: String
            switch value {
            case .string(let string):
                element = "element.type = 'text' AND element.value = ?"
                arguments += [path, path, string]
            case .number(let number):
                element = "element.type IN ('integer', 'real') AND element.value = ?"
                arguments += [path, path, number]
            case .bool(let bool):
                element = "element.type = ?"
                arguments += [path, path, bool ? "true" : "false"]
            case .null:
                return "0"      // null equals no element, as no property (the rule's comparisons)
            }
            return """
                COALESCE(json_type(data, ?) = 'array' AND EXISTS (SELECT 1 FROM json_each(data, ?) AS element WHERE \(element)), 0)
                """
        case .and(let left, let right):
            return "(\(compile(left)) AND \(compile(right)))"
        case .or(let left, let right):
            return "(\(compile(left)) OR \(compile(right)))"
        case .not(let inner):
            return "NOT (\(compile(inner)))"
        }
    }
}
