import Foundation

// The reads of `check()` and `collectGarbage()` built on the primitives: the rows' own problems,
// found by the garage's readers (``RowChecks``: the JSON reader a retrieve uses), every row read a
// page at a time. They are the default implementations; SQLite answers in SQL, in the same words.
extension RowStatements {
    /// Calls `body` with each live row, in key order, until it returns `false`; an unreadable
    /// row is skipped (its read reports it).
    private func forEachLiveRow(_ body: (StoredRow) throws -> Bool) throws {
        try forEachRecord(ofType: nil) { record in
            guard case .row(let row) = record, !row.isDeleted else { return true }
            return try body(row)
        }
    }

    /// The rows whose reference list is invalid, then those whose unencrypted data is not JSON,
    /// then the references to rows that don't exist (of the wrong type, when the identifier
    /// exists under other types).
    package func integrityProblems(limit: Int) throws -> (problems: [IntegrityReport.Problem], isTruncated: Bool) {
        var listProblems: [IntegrityReport.Problem] = []
        var dataProblems: [IntegrityReport.Problem] = []
        // Every list problem comes before every data problem: the scan goes on until the lists
        // alone fill the report (one more than fits tells it is truncated).
        try forEachLiveRow { row in
            if let reason = RowChecks.referenceListProblem(row.references) {
                listProblems.append(.invalidReferenceList(typeName: row.key.typeName, identifier: row.key.identifier, reason: reason))
            }
            if !row.isEncrypted, listProblems.count + dataProblems.count <= limit, let reason = RowChecks.dataProblem(row.data) {
                dataProblems.append(.invalidJSON(typeName: row.key.typeName, identifier: row.key.identifier, reason: reason))
            }
            return listProblems.count <= limit
        }
        var problems = listProblems + dataProblems
        if problems.count > limit { return (Array(problems.prefix(limit)), true) }
        let room = limit - problems.count
        let dangling = try danglingReferences(limit: room + 1)
        let types = try types().sorted()
        for (from, to) in dangling.prefix(room) {
            var foundTypes: [String] = []
            for type in types where type != to.typeName {
                if try row(ObjectKey(typeName: type, identifier: to.identifier), for: .metadata) != nil { foundTypes.append(type) }
            }
            problems.append(foundTypes.isEmpty
                ? .danglingReference(fromType: from.typeName, fromIdentifier: from.identifier,
                                     toType: to.typeName, toIdentifier: to.identifier)
                : .wrongTypeReference(fromType: from.typeName, fromIdentifier: from.identifier,
                                      toType: to.typeName, toIdentifier: to.identifier, foundTypes: foundTypes))
        }
        return (problems, dangling.count > room)
    }

    package func firstInvalidReferenceList() throws -> (key: ObjectKey, reason: String)? {
        var found: (key: ObjectKey, reason: String)?
        try forEachLiveRow { row in
            if let reason = RowChecks.referenceListProblem(row.references) { found = (row.key, reason) }
            return found == nil
        }
        return found
    }

    /// References of live rows whose lists are usable and exact (not an import's guess) to rows that don't exist, in the order
    /// of the referencing rows, then of their lists. A reference to a deletion the server has
    /// (a `.synced` tombstone) is not dangling.
    package func danglingReferences(limit: Int?) throws -> [(from: ObjectKey, to: ObjectKey)] {
        var dangling: [(from: ObjectKey, to: ObjectKey)] = []
        var exists: [ObjectKey: Bool] = [:]
        try forEachLiveRow { row in
            guard row.referencesKnown, row.references != ReferenceList.empty,
                  let keys = try? ReferenceList.decode(row.references) else { return true }
            for key in keys {
                let found = try exists[key] ?? {
                    let target = try record(key).flatMap { try? $0.get() }
                    return target.map { !$0.isDeleted || $0.syncStatus == .synced } ?? false
                }()
                exists[key] = found
                if !found {
                    dangling.append((row.key, key))
                    if let limit, dangling.count >= limit { return false }
                }
            }
            return true
        }
        return dangling
    }

    /// A walk of the references from the roots' (and `extraRoots`); every reference list is
    /// usable (``firstInvalidReferenceList()`` says so first).
    package func unreachableRows(extraRoots: [ObjectKey]) throws -> [ObjectKey] {
        let rows = try everyRow(ofType: nil)
        let references = Dictionary(uniqueKeysWithValues: rows.map { ($0.key, RowChecks.validReferences($0.references)) })
        var reached = Set<ObjectKey>()
        var next = extraRoots + rows.filter { $0.isRoot && !$0.isDeleted }.flatMap { references[$0.key] ?? [] }
        while let key = next.popLast() {
            guard reached.insert(key).inserted else { continue }
            next += references[key] ?? []
        }
        return rows.filter { !$0.isRoot && !$0.isDeleted && !reached.contains($0.key) }.map(\.key)
    }
}
