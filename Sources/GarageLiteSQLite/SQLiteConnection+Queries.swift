import Foundation
import GRDB
import GarageLiteCore

// Queries (`RowQuery`) in SQL over the objects' JSON: `json_type` and `json_extract` with
// the path bound as a parameter. Each condition reads as its rule (`RowQuery+Evaluation`)
// says, held to it by `QueryRuleTests`: a comparison matches only a value of its own kind,
// strings compare by their bytes (the column's BINARY collation), every condition is 0 or 1
// (never NULL, so that NOT negates it).
extension SQLiteConnection {
    package func identifiers(matching query: RowQuery) throws -> [String] {
        guard let (sql, arguments) = try SQLiteQuery.identifiersStatement(query, indexes: sortIndexes(query)) else {
            return try identifiersByRule(matching: query)
        }
        return try readingJSON(query, byRule: { try identifiersByRule(matching: query) }) {
            try String.fetchAll(StatementsBySQL.cached(sql, in: db), arguments: StatementArguments(arguments))
        }
    }

    /// The rows `query` matches, in its order, read by the statement that finds them (rather
    /// than their identifiers, then each row by its key).
    package func rows(matching query: RowQuery, for purpose: RowPurpose) throws -> [StoredRow] {
        guard let (sql, arguments) = try SQLiteQuery.identifiersStatement(
            query, indexes: sortIndexes(query), selecting: purpose == .content ? Self.contentColumns : Self.columns) else {
            return try rowsByRule(matching: query, for: purpose)
        }
        let bound: [RowArgument] = arguments.map { argument in
            switch argument {
            case nil: return .null
            case let text as String: return .text(text)
            case let number as Double: return .real(number)
            case let integer as Int: return .integer(integer)
            case let integer as Int64: return .integer(Int(integer))
            case let flag as Bool: return .integer(flag ? 1 : 0)
            case let other?: return .text("\(other)")      // the compiler binds none other
            }
        }
        return try readingJSON(query, byRule: { try rowsByRule(matching: query, for: purpose) }) {
            try readRows(sql, bound, purpose: purpose).map { try $0.get() }
        }
    }

    private func rowsByRule(matching query: RowQuery, for purpose: RowPurpose) throws -> [StoredRow] {
        try identifiersByRule(matching: query).compactMap { identifier in
            try row(ObjectKey(typeName: query.typeName, identifier: identifier), for: purpose)
        }
    }

    /// The recorded indexes, read when `query` sorts by a field and no comparison of it can be
    /// answered from an index (``SQLiteQuery/identifiersStatement(_:indexes:)``).
    private func sortIndexes(_ query: RowQuery) throws -> [QueryIndexDefinition] {
        guard case .field = query.sortOrders.first?.key, query.requiredComparisons.isEmpty else { return [] }
        return try QueryIndexDefinition.recorded(in: metadata(QueryIndexDefinition.fact))
    }

    package func count(matching query: RowQuery) throws -> Int {
        var counted = query
        counted.limit = nil
        counted.sortOrders = []
        guard let compiled = SQLiteQuery(counted) else { return try identifiersByRule(matching: counted).count }
        let sql = "SELECT COUNT(*) FROM garage_object WHERE \(compiled.rows) AND \(compiled.condition)"
        return try readingJSON(counted, byRule: { try identifiersByRule(matching: counted).count }) {
            try Int.fetchOne(StatementsBySQL.cached(sql, in: db), arguments: StatementArguments(compiled.arguments)) ?? 0
        }
    }

    /// An expression index over the type's live rows: for each field, the rank and the value
    /// the query SQL compares and sorts on (``SQLiteQuery/rankExpression(_:)``,
    /// ``SQLiteQuery/valueExpression(_:)``), then the identifier, so that the index answers both a
    /// comparison and an order by its fields, ties in identifier order.
    package func createQueryIndex(_ definition: QueryIndexDefinition) throws {
        if definition.isText { return try createTextIndex(definition) }
        let expressions = definition.fields.flatMap { [SQLiteQuery.rankExpression($0), SQLiteQuery.valueExpression($0)] }
        try db.execute(sql: """
            CREATE INDEX IF NOT EXISTS "\(definition.name)" ON garage_object (\((expressions + ["identifier"]).joined(separator: ", ")))
            WHERE type = \(SQLiteQuery.literal(definition.typeName)) AND isDeleted = 0
            """)
        // Statistics of the table's indexes, the primary key's included, tell SQLite's planner
        // how few rows share an indexed value and how many share a type; without them it rates
        // the primary key's (type = ?) as good as the new index. A sample of each index is enough.
        try db.execute(sql: "PRAGMA analysis_limit = 1000; ANALYZE garage_object; PRAGMA analysis_limit = 0")
    }

    package func dropQueryIndex(_ definition: QueryIndexDefinition) throws {
        if definition.isText { return try dropTextIndex(definition) }
        try db.execute(sql: "DROP INDEX IF EXISTS \"\(definition.name)\"")
    }

    /// Runs `body`; when SQLite finds a row's JSON malformed (which fails the whole statement),
    /// answers by the rule instead, which throws the error that names the row. A statement
    /// too large for SQLite (a user's predicate of thousands of conditions: more parameters,
    /// a deeper tree or a longer text than it takes) is answered `byRule`: slower, never refused.
    private func readingJSON<T>(_ query: RowQuery, byRule: () throws -> T, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as DatabaseError where error.message?.contains("malformed JSON") == true {
            _ = try identifiersByRule(matching: query)
            throw error
        } catch let error as DatabaseError where Self.isTooLarge(error) {
            return try byRule()
        }
    }

    /// Whether SQLite refused a statement for its size, not for what it reads.
    private static func isTooLarge(_ error: DatabaseError) -> Bool {
        if error.resultCode == .SQLITE_TOOBIG { return true }
        guard let message = error.message else { return false }
        return ["parser stack overflow", "Expression tree is too large", "too many SQL variables", "too many terms"]
            .contains { message.contains($0) }
    }
}

/// A ``RowQuery`` in SQLite's SQL: its condition and its arguments, its orderings and theirs.
package struct SQLiteQuery {
    package var condition = ""
    package var arguments: [(any DatabaseValueConvertible)?] = []
    package var orderings: [String] = []
    package var orderingArguments: [(any DatabaseValueConvertible)?] = []
    /// What the statement starts with (a `WITH` clause), and its arguments.
    package var prefix = ""
    package var prefixArguments: [(any DatabaseValueConvertible)?] = []
    /// The type's text index, for a text search (``SQLiteConnection/createTextIndex(_:)``).
    package var textIndex: QueryIndexDefinition?
    /// The stored type name of the query's objects.
    package var typeName = ""
    /// The fields whose rank every match shares: a comparison with a value among the
    /// conditions every match meets (``compileRequired(_:)``) pins it. An order by such a field
    /// leaves its rank out: a constant term in an `ORDER BY` is one SQLite's planner does not see
    /// through, and it then sorts every match (a feed's page after a position read the whole
    /// rest of the feed) instead of reading the index in order.
    private var pinnedRanks: Set<Field> = []

    /// The rows a query reads: the live rows of its type, written as an index's `WHERE` is
    /// (the type a literal), so that SQLite may read an index of the type (``createQueryIndex``).
    package var rows = ""

    /// The statement of the identifiers `query` matches, in its order, and its arguments.
    ///
    /// A query sorted by a field that leads one of `indexes` (of its type), and with no
    /// comparison an index can answer, reads that index (`INDEXED BY`), whose order is the
    /// query's: SQLite's planner would choose it from the statistics its creation gathered, but
    /// an index declared on an empty store has none worth reading.
    package static func identifiersStatement(_ query: RowQuery, indexes: [QueryIndexDefinition] = [], selecting: String = "identifier")
        -> (sql: String, arguments: [(any DatabaseValueConvertible)?])? {
        guard let compiled = SQLiteQuery(query) else { return nil }
        var table = "garage_object"
        if case .field(let field) = query.sortOrders.first?.key, query.requiredComparisons.isEmpty,
           let index = indexes.first(where: { !$0.isText && $0.typeName == query.typeName && $0.fields.first == field }) {
            table += " INDEXED BY \"\(index.name)\""
        }
        var sql = compiled.prefix + "SELECT \(selecting) FROM \(table) WHERE \(compiled.rows) AND \(compiled.condition)"
        sql += " ORDER BY " + (compiled.orderings + ["identifier"]).joined(separator: ", ")
        var arguments = compiled.prefixArguments + compiled.arguments + compiled.orderingArguments
        if let limit = query.limit {
            sql += " LIMIT ?"
            arguments.append(limit)
        }
        return (sql, arguments)
    }

    /// `text` as an SQL string literal.
    package static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// A row's JSON, NULL in an encrypted row, whose data is no JSON (an index on a garage
    /// encrypted later keeps working: its encrypted rows rank as missing).
    private static let plainData = "CASE WHEN isEncrypted = 0 THEN data END"

    /// The rank of the value at `field` in an order: 0 missing or null, 1 a boolean, 2 a number,
    /// 3 a string, 4 an array or an object (the rule's `SortValue.rank`). Written with the path
    /// a literal, as an index's expression (``SQLiteConnection/createQueryIndex(_:)``) is, so
    /// that SQLite's planner matches the two.
    package static func rankExpression(_ field: Field) -> String {
        "CASE COALESCE(json_type(\(plainData), \(literal(path(field)))), 'null') WHEN 'null' THEN 0 WHEN 'true' THEN 1 "
            + "WHEN 'false' THEN 1 WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 ELSE 4 END"
    }

    /// The value at `field` within its rank: a boolean as 0 or 1, a number, a string; NULL for
    /// an array or an object, which are all level (the rule's `SortValue`).
    package static func valueExpression(_ field: Field) -> String {
        let path = literal(path(field))
        return "CASE WHEN json_type(\(plainData), \(path)) IN ('true', 'false', 'integer', 'real', 'text') "
            + "THEN json_extract(\(plainData), \(path)) END"
    }

    /// `value` as SQLite compares it with `json_extract`'s result: a boolean as 0 or 1.
    package static func bound(_ value: QueryValue.Content) -> (any DatabaseValueConvertible)? {
        switch value {
        case .string(let string): return string
        case .number(let number): return number
        case .bool(let flag): return flag ? 1 : 0
        case .null: return nil
        }
    }

    /// `nil` when a key can't be written in a JSON path (``isPlain(_:)``): the rule answers that
    /// query.
    package init?(_ query: RowQuery) {
        guard query.fields.allSatisfy({ $0.path.allSatisfy(Self.isPlain) }) else { return nil }
        rows = "type = \(Self.literal(query.typeName)) AND isDeleted = 0"
        textIndex = query.textIndex
        typeName = query.typeName
        condition = compileRequired(query.predicate)
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
            case .relevance:
                orderings.append("\(relevance(query.textSearch ?? "")) \(direction)")
            case .field(let field):
                if !pinnedRanks.contains(field) { orderings.append("\(Self.rankExpression(field)) \(direction)") }
                orderings.append("\(Self.valueExpression(field)) \(direction)")
            }
        }
    }

    /// The predicate's conditions that every match meets (those `&&` joins at its top); each
    /// comparison with a value among them written on the expressions an index of its field
    /// holds (``rankExpression(_:)``, ``valueExpression(_:)``), which read as the comparison
    /// does (its value's kind, then the value), so that SQLite may answer it from an index.
    private mutating func compileRequired(_ node: QueryPredicate.Node) -> String {
        switch node {
        case .and(let list):
            return Self.joined(list.map { compileRequired($0) }, "AND")
        case .compare(let field, let comparison, let value):
            guard let rank = value.rank else { return compile(node) }
            pinnedRanks.insert(field)
            arguments.append(Self.bound(value))
            return "(\(Self.rankExpression(field)) = \(rank) AND \(Self.valueExpression(field)) "
                + "\(comparison == .equal ? "=" : comparison.rawValue) ?)"
        default:
            return compile(node)
        }
    }

    /// `$."key"."key"`: every key quoted, so that any plain key (``isPlain(_:)``) is read as it is.
    package static func path(_ field: Field) -> String {
        "$" + field.path.map { ".\"\($0)\"" }.joined()
    }

    /// Whether `key` reads the same in a JSON path as in the objects' JSON: SQLite (3.40) finds a
    /// quoted key of a path by comparing it with the key as the JSON's text spells it, escapes
    /// and all, and a key holding a quote, a backslash or a control character is spelled with
    /// escapes (which a JSON writer may spell in more than one way: `\n` or `\u000a`). Queries
    /// of such a key are answered by the rule; a text index reads it with `json_each`, whose
    /// keys are decoded (``SQLiteQuery/indexedText(_:of:)``).
    package static func isPlain(_ key: String) -> Bool {
        !key.utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
    }

    /// `terms` joined by `operation` (`AND`, `OR`) in balanced groups: SQLite's tree of a chain
    /// is as deep as the chain is long, and it refuses one deeper than 1,000; groups keep it
    /// logarithmic.
    package static func joined(_ terms: [String], _ operation: String) -> String {
        guard terms.count > 16 else { return "(" + terms.joined(separator: " \(operation) ") + ")" }
        let middle = terms.count / 2
        return "(" + joined(Array(terms[..<middle]), operation) + " \(operation) " + joined(Array(terms[middle...]), operation) + ")"
    }

    /// An `isIn(_:)`: `field` equals one of `values`, each kind's values bound as one JSON array
    /// (whatever their number, three parameters a kind).
    private mutating func compileAmong(_ field: Field, _ values: [QueryValue.Content]) -> String {
        let path = Self.path(field)
        var strings: [JSONValue] = [], numbers: [JSONValue] = [], booleans: Set<Bool> = []
        for value in values {
            switch value {
            case .string(let string): strings.append(.string(string))
            // A number that isn't finite equals no stored number (JSON holds none).
            case .number(let number) where number.isFinite: numbers.append(.number("\(number)"))
            case .bool(let flag): booleans.insert(flag)
            case .number, .null: continue
            }
        }
        var terms: [String] = []
        for (list, kinds) in [(strings, "'text'"), (numbers, "'integer', 'real'")] where !list.isEmpty {
            arguments += [path, path, JSONWriter.string(from: .array(list))]
            terms.append("COALESCE(json_type(data, ?) IN (\(kinds)) AND json_extract(data, ?) IN (SELECT value FROM json_each(?)), 0)")
        }
        if !booleans.isEmpty {
            arguments.append(path)
            terms.append("COALESCE(json_type(data, ?) IN (\(booleans.sorted { !$0 && $1 }.map { $0 ? "'true'" : "'false'" }.joined(separator: ", "))), 0)")
        }
        return terms.isEmpty ? "0" : Self.joined(terms, "OR")
    }

    private mutating func compile(_ node: QueryPredicate.Node) -> String {
        switch node {
        case .all: return "1"
        case .syncStatus(let status):
            arguments.append(status.rawValue)
            return "syncStatus = ?"
        case .references(let toType, let toIdentifier):
            arguments += [toType, toIdentifier, typeName]
            return "identifier IN (SELECT fromIdentifier FROM garage_reference WHERE toType = ? AND toIdentifier = ? AND fromType = ?)"
        case .referenceMatches:
            return "0"      // answered as `referenceAmong` first (StoreView.resolvingReferences)
        case .referenceAmong(let field, let identifiers):
            let path = Self.path(field)
            arguments += [path, path, JSONWriter.string(from: .array(identifiers.map(JSONValue.string)))]
            return "COALESCE(json_type(data, ?) IN ('text', 'array') AND EXISTS (SELECT 1 FROM json_each(data, ?) AS element "
                + "WHERE element.type = 'text' AND element.value IN (SELECT value FROM json_each(?))), 0)"
        case .textMatches(let search):
            guard let textIndex, let match = Self.textMatch(search) else { return "0" }
            arguments.append(match)
            return "identifier IN (SELECT identifier FROM \"\(textIndex.name)_docs\" WHERE docid IN "
                + "(SELECT rowid FROM \"\(textIndex.name)\" WHERE \"\(textIndex.name)\" MATCH ?))"
        case .compare(let field, let comparison, let value):
            let path = Self.path(field)
            let operation = comparison == .equal ? "=" : comparison.rawValue
            let kinds: String
            switch value {
            case .string: kinds = "'text'"
            case .number: kinds = "'integer', 'real'"
            case .bool: kinds = "'true', 'false'"
            case .null: return "0"
            }
            arguments += [path, path, Self.bound(value)]
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
        case .and(let list):
            return Self.joined(list.map { compile($0) }, "AND")
        case .or(let list):
            if let (field, values) = QueryPredicate.equalities(list) { return compileAmong(field, values) }
            return Self.joined(list.map { compile($0) }, "OR")
        case .not(let inner):
            return "NOT (\(compile(inner)))"
        case .refused:
            return "0"      // refused before any store answers (`RowQuery.problem(in:)`)
        }
    }
}
