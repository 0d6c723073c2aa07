import Foundation
import GarageLite
import PostgresNIO

// A type's text index on PostgreSQL: a GIN index of the `tsvector` (configuration `simple`)
// of the text its indexed fields hold, which a function of the garage's schema reads from a
// row's JSON (an index expression can't hold the subqueries that reading takes).
extension PostgresStatements {
    func createTextIndex(_ definition: QueryIndexDefinition) throws {
        try run(PostgresQuery(unsafeSQL: """
            CREATE OR REPLACE FUNCTION \(schema).garage_text(data text, paths json) RETURNS text
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
                SELECT coalesce(string_agg(pieces.piece, ' ' ORDER BY p.n, pieces.m), '')
                FROM json_array_elements(paths) WITH ORDINALITY AS p(path, n)
                CROSS JOIN LATERAL (SELECT data::json #> ARRAY(SELECT json_array_elements_text(p.path)) AS v) AS x
                CROSS JOIN LATERAL (
                    SELECT x.v #>> '{}' AS piece, 0::bigint AS m WHERE json_typeof(x.v) = 'string'
                    UNION ALL
                    SELECT a.e #>> '{}', a.m
                    FROM json_array_elements(CASE WHEN json_typeof(x.v) = 'array' THEN x.v END) WITH ORDINALITY AS a(e, m)
                    WHERE json_typeof(a.e) = 'string'
                ) AS pieces
            $$
            """))
        try run(PostgresQuery(unsafeSQL: """
            CREATE INDEX IF NOT EXISTS \(definition.name) ON \(objects)
            USING gin ((\(PostgresQueryCompiler.textVector(definition, schema: schema, table: ""))))
            WHERE type = \(PostgresQueryCompiler.literal(definition.typeName)) AND NOT is_deleted
            """))
    }
}

extension PostgresQueryCompiler {
    /// The words of a row's indexed text, as the text index holds them; `table` is the alias of
    /// the table and a dot, or nothing.
    static func textVector(_ definition: QueryIndexDefinition, schema: String, table: String) -> String {
        let paths = "[" + definition.paths.map { path in
            "[" + path.map(jsonString).joined(separator: ",") + "]"
        }.joined(separator: ",") + "]"
        return "to_tsvector('simple'::regconfig, \(schema).garage_text(CASE WHEN NOT \(table)is_encrypted THEN \(table)data END, "
            + "\(literal(paths))::json))"
    }

    /// `key` as a JSON string: a quote, a backslash and a control character escaped (a key
    /// without them is written as it is, as the indexes made before wrote it).
    private static func jsonString(_ key: String) -> String {
        var written = "\""
        for scalar in key.unicodeScalars {
            switch scalar {
            case "\"": written += "\\\""
            case "\\": written += "\\\\"
            case _ where scalar.value < 0x20: written += String(format: "\\u%04x", scalar.value)
            default: written.unicodeScalars.append(scalar)
            }
        }
        return written + "\""
    }

    /// How many terms one `tsquery` holds at most: PostgreSQL reads a query's terms as a tree
    /// as deep as their number, and a search of 20,000 words exceeded its stack.
    static let termsPerMatch = 256

    /// `tsquery`s of the search's terms, each quoted (`'word'`, `'word':*` for a prefix), all
    /// required: one for each ``termsPerMatch`` terms; `nil` for a search without words, which
    /// matches nothing.
    static func textMatches(_ search: String) -> [String]? {
        let terms = TextSearch.terms(search)
        guard !terms.isEmpty else { return nil }
        return stride(from: 0, to: terms.count, by: termsPerMatch).map { start in
            terms[start..<min(start + termsPerMatch, terms.count)].map {
                "'" + $0.word.replacingOccurrences(of: "'", with: "''").replacingOccurrences(of: "\\", with: "\\\\") + "'"
                    + ($0.isPrefix ? ":*" : "")
            }.joined(separator: " & ")
        }
    }
}
