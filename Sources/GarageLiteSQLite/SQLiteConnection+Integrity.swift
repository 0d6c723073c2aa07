import Foundation
import GRDB
import GarageLiteCore

// The statements of `check()` and `collectGarbage()`. They read the columns and SQLite's JSON
// functions only, never the app's types: a store can be checked by any program.
extension SQLiteConnection {
    // MARK: - Checking

    /// Why a row's `refs` is not a JSON array of `[type, identifier]` string pairs, or NULL.
    ///
    /// A CASE, because SQLite's JSON functions fail the whole statement on malformed JSON, and
    /// only CASE promises not to evaluate a branch before its condition holds. `refs` is the
    /// row's column, from the enclosing query.
    private static let referenceListProblem = """
        CASE
            WHEN refs = '[]' THEN NULL
            WHEN typeof(refs) <> 'text' THEN 'it is ' || typeof(refs) || ', not text'
            WHEN NOT json_valid(refs) THEN 'it is not valid JSON'
            WHEN json_type(refs) <> 'array' THEN 'it is a JSON ' || json_type(refs) || ', not an array'
            WHEN EXISTS (
                SELECT 1 FROM json_each(refs) AS element
                WHERE CASE WHEN element.type = 'array'
                    THEN json_array_length(element.value) <> 2
                        OR json_type(element.value, '$[0]') IS NOT 'text'
                        OR json_type(element.value, '$[1]') IS NOT 'text'
                    ELSE 1 END)
                THEN 'an element is not a ["Type", "identifier"] pair of strings'
        END
        """

    /// Why an unencrypted row's `data` is not JSON, or NULL. Encrypted data is the delegate's
    /// business: without the delegate, nothing can be said about it.
    private static let dataProblem = """
        CASE
            WHEN isEncrypted <> 0 THEN NULL
            WHEN typeof(data) <> 'text' THEN 'it is ' || typeof(data) || ', not text'
            WHEN NOT json_valid(data) THEN 'it is not valid JSON'
        END
        """

    /// What is wrong with the store file, up to `limit` problems (and whether there were more):
    /// the fields of its header that SQLite misreads rather than reports (those that refuse an
    /// open, ``StoreFile/headerDamage(_:isGarageStore:)``), then SQLite's own check of the file.
    ///
    /// When SQLite finds the file damaged, the checks of rows may fail too: each failure is
    /// reported as an SQLite problem rather than thrown, so that the caller gets the report.
    /// (SQLite may then fail to end the read transaction too: see ``Garage/check(maximumProblems:)-3x71a``.)
    package func fileProblems(limit: Int) throws -> (problems: [IntegrityReport.Problem], isTruncated: Bool) {
        try running([("the check of the file's header", headerProblems), ("SQLite's integrity check", sqliteProblems)],
                    limit: limit)
    }

    /// The damage of the file's header, as opening the store would report it (the file may have
    /// been damaged since this garage opened it).
    private func headerProblems(limit: Int) throws -> [IntegrityReport.Problem] {
        guard limit > 0, let connection = db.sqliteConnection, let header = StoreFile.header(of: connection),
              let damage = StoreFile.headerDamage(header, isGarageStore: StoreFile.applicationID(header) == Schema.applicationID)
        else { return [] }
        return [.sqlite(damage)]
    }

    /// What is wrong with the rows, up to `limit` problems (and whether there were more), from
    /// one snapshot: the rows whose reference list or data is invalid, then the references to
    /// rows that do not exist.
    package func integrityProblems(limit: Int) throws -> (problems: [IntegrityReport.Problem], isTruncated: Bool) {
        try running([
            ("the check of reference lists", referenceListProblems),
            ("the check of JSON data", dataProblems),
            ("the check of references", missingReferenceProblems),
        ], limit: limit)
    }

    /// Runs `checks` in order, up to `limit` problems in all; a check that finds the file
    /// damaged reports that.
    private func running(
        _ checks: [(name: String, run: (Int) throws -> [IntegrityReport.Problem])], limit: Int
    ) throws -> (problems: [IntegrityReport.Problem], isTruncated: Bool) {
        var problems: [IntegrityReport.Problem] = []
        for check in checks {
            let room = max(0, limit - problems.count)
            var found: [IntegrityReport.Problem]
            do {
                // One more than fits: a full list then tells whether it is truncated.
                found = try check.run(room + 1)
            } catch let error as DatabaseError where isDamage(error) {
                found = [.sqlite("\(check.name) failed: \(SQLiteEngine.reason(error))")]
            }
            if found.count > room {
                problems.append(contentsOf: found.prefix(room))
                return (problems, true)
            }
            problems.append(contentsOf: found)
        }
        return (problems, false)
    }

    /// Whether SQLite reports the file itself as damaged (rather than busy, or out of memory).
    private func isDamage(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
    }

    /// The lines of SQLite's `integrity_check`, except its "ok" and its headers.
    ///
    /// The statement, not the `pragma_integrity_check` function: on a damaged file, the
    /// function fails where the statement lists the damage. Its argument can't be bound; it
    /// is an integer.
    private func sqliteProblems(limit: Int) throws -> [IntegrityReport.Problem] {
        try String.fetchAll(db, sql: "PRAGMA integrity_check(\(limit))")
            .flatMap { $0.split(separator: "\n") }
            .filter { $0 != "ok" && !$0.hasPrefix("*** in database ") }
            .map { .sqlite(String($0)) }
    }

    private func referenceListProblems(limit: Int) throws -> [IntegrityReport.Problem] {
        try Row.fetchAll(db, sql: """
            SELECT type, identifier, problem
            FROM (SELECT type, identifier, \(Self.referenceListProblem) AS problem FROM garage_object WHERE isDeleted = 0)
            WHERE problem IS NOT NULL ORDER BY type, identifier LIMIT ?
            """, arguments: [limit]).map { row in
            .invalidReferenceList(typeName: try row.decode(String.self, atIndex: 0),
                                  identifier: try row.decode(String.self, atIndex: 1),
                                  reason: try row.decode(String.self, atIndex: 2))
        }
    }

    private func dataProblems(limit: Int) throws -> [IntegrityReport.Problem] {
        try Row.fetchAll(db, sql: """
            SELECT type, identifier, problem, CASE WHEN typeof(data) = 'text' THEN data END
            FROM (SELECT type, identifier, data, \(Self.dataProblem) AS problem FROM garage_object WHERE isDeleted = 0)
            WHERE problem IS NOT NULL ORDER BY type, identifier LIMIT ?
            """, arguments: [limit]).map { row in
            var reason = try row.decode(String.self, atIndex: 2)
            // The garage's own reader says where: it is the one a retrieve would fail in.
            if let data = try row.decode(String?.self, atIndex: 3) {
                do {
                    _ = try JSONReader.parse(data)
                } catch let failure as JSONReader.Failure {
                    reason = "\(reason): \(failure)"
                }
            }
            return .invalidJSON(typeName: try row.decode(String.self, atIndex: 0),
                                identifier: try row.decode(String.self, atIndex: 1), reason: reason)
        }
    }

    /// References to rows that do not exist; when the identifier exists under other types,
    /// a reference of the wrong type.
    private func missingReferenceProblems(limit: Int) throws -> [IntegrityReport.Problem] {
        let references = try danglingReferences(limit: limit)
        guard !references.isEmpty else { return [] }
        let types = try String.fetchAll(db, sql: "SELECT DISTINCT type FROM garage_object WHERE isDeleted = 0 ORDER BY type")
        let exists = try db.cachedStatement(sql: "SELECT 1 FROM garage_object WHERE type = ? AND identifier = ? AND isDeleted = 0")
        return try references.map { from, to in
            let foundTypes = try types.filter {
                try $0 != to.typeName && Bool.fetchOne(exists, arguments: [$0, to.identifier]) != nil
            }
            if foundTypes.isEmpty {
                return .danglingReference(fromType: from.typeName, fromIdentifier: from.identifier,
                                          toType: to.typeName, toIdentifier: to.identifier)
            }
            return .wrongTypeReference(fromType: from.typeName, fromIdentifier: from.identifier,
                                       toType: to.typeName, toIdentifier: to.identifier, foundTypes: foundTypes)
        }
    }

    /// Up to `limit` references (all when `nil`) to rows that do not exist, in the order of
    /// the referencing rows. Rows whose reference list is unusable, or a guess (an imported
    /// object's), are skipped.
    /// A reference to an object whose deletion the server has (a `.synced` tombstone, kept while
    /// a referrer names it) is not dangling: the referrer reads as if it had been removed, and
    /// nothing is left to do. One to a local deletion not uploaded yet is listed: the referrer
    /// reads, but should be parked without it.
    package func danglingReferences(limit: Int?) throws -> [(from: ObjectKey, to: ObjectKey)] {
        let rows = try Row.fetchAll(db, sql: """
            SELECT source.type, source.identifier,
                json_extract(reference.value, '$[0]'), json_extract(reference.value, '$[1]')
            FROM (SELECT type, identifier,
                    CASE WHEN (\(Self.referenceListProblem)) IS NULL THEN refs ELSE '[]' END AS refs
                  FROM garage_object WHERE isDeleted = 0 AND referencesKnown <> 0) AS source,
                json_each(source.refs) AS reference
            WHERE NOT EXISTS (
                SELECT 1 FROM garage_object AS target
                WHERE target.type = json_extract(reference.value, '$[0]')
                    AND target.identifier = json_extract(reference.value, '$[1]')
                    AND (target.isDeleted = 0 OR target.syncStatus = \(SyncStatus.synced.rawValue)))
            ORDER BY source.type, source.identifier, reference.key
            LIMIT ?
            """, arguments: [limit ?? -1])
        return try rows.map { row in
            (ObjectKey(typeName: try row.decode(String.self, atIndex: 0), identifier: try row.decode(String.self, atIndex: 1)),
             ObjectKey(typeName: try row.decode(String.self, atIndex: 2), identifier: try row.decode(String.self, atIndex: 3)))
        }
    }

    // MARK: - Collecting garbage

    /// The first row whose reference list is unusable, with the reason: while there is one,
    /// which rows are reachable can't be told.
    package func firstInvalidReferenceList() throws -> (key: ObjectKey, reason: String)? {
        guard let row = try Row.fetchOne(db, sql: """
            SELECT type, identifier, problem
            FROM (SELECT type, identifier, \(Self.referenceListProblem) AS problem FROM garage_object WHERE isDeleted = 0)
            WHERE problem IS NOT NULL ORDER BY type, identifier LIMIT 1
            """) else { return nil }
        return (ObjectKey(typeName: try row.decode(String.self, atIndex: 0), identifier: try row.decode(String.self, atIndex: 1)),
                try row.decode(String.self, atIndex: 2))
    }

    /// The rows never parked directly (`isRoot = 0`) that no chain of references leads to from
    /// a root or from `extraRoots`, in type and identifier order.
    ///
    /// Every reference list must be valid (see ``firstInvalidReferenceList(_:)``).
    package func unreachableRows(extraRoots: [ObjectKey]) throws -> [ObjectKey] {
        let rows = try Row.fetchAll(db, sql: Self.unreachableRowsSQL, arguments: [ReferenceList.encode(extraRoots)])
        return try rows.map {
            ObjectKey(typeName: try $0.decode(String.self, atIndex: 0), identifier: try $0.decode(String.self, atIndex: 1))
        }
    }

    /// The walk starts from the references of the roots rather than from the roots themselves,
    /// so that its working set is the referenced rows, not the whole table; each step finds a
    /// row by its primary key. `UNION` drops the pairs already reached, so cycles end.
    package static let unreachableRowsSQL = """
        WITH RECURSIVE reachable(type, identifier) AS (
            SELECT json_extract(reference.value, '$[0]'), json_extract(reference.value, '$[1]')
            FROM garage_object AS root, json_each(root.refs) AS reference
            WHERE root.isRoot <> 0 AND root.isDeleted = 0 AND root.refs <> '[]'
            UNION
            SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)
            UNION
            SELECT json_extract(reference.value, '$[0]'), json_extract(reference.value, '$[1]')
            FROM reachable
            JOIN garage_object AS referenced
                ON referenced.type = reachable.type AND referenced.identifier = reachable.identifier,
                json_each(referenced.refs) AS reference
        )
        SELECT type, identifier FROM garage_object WHERE isRoot = 0 AND isDeleted = 0
        EXCEPT
        SELECT type, identifier FROM reachable
        ORDER BY type, identifier
        """
}
