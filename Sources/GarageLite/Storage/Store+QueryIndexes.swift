import Foundation
import GarageLiteCore

// The indexes an app declares for its queries: created by the engine, and recorded in the
// store's facts (`query_indexes`, a JSON array of their definitions), so that any garage on
// the store lists them.
extension Store {
    private static func recorded(_ statements: any RowStatements) throws -> [QueryIndexDefinition] {
        try QueryIndexDefinition.recorded(in: statements.metadata(QueryIndexDefinition.fact))
    }

    private static func record(_ definitions: [QueryIndexDefinition], _ statements: any RowWriteStatements) throws {
        let data = try JSONEncoder().encode(definitions.sorted { $0.name < $1.name })
        try statements.setMetadata(QueryIndexDefinition.fact, String(decoding: data, as: UTF8.self))
    }

    /// Drops the recorded indexes that `isDropped` picks, and takes them out of `definitions`.
    private static func drop(_ definitions: inout [QueryIndexDefinition], where isDropped: (QueryIndexDefinition) -> Bool,
                             _ statements: any RowWriteStatements) throws {
        for definition in definitions where isDropped(definition) { try statements.dropQueryIndex(definition) }
        definitions.removeAll(where: isDropped)
    }

    /// Creates and records `definition`; `false` when the store has it already.
    func creatingQueryIndex(_ definition: QueryIndexDefinition) -> StoreWork<Bool> {
        StoreWork(operation: "index \(definition.typeName)", access: .write { statements in
            try Store.transaction(statements) {
                var definitions = try Self.recorded(statements)
                guard !definitions.contains(where: { $0.name == definition.name }) else { return false }
                if definition.isText {
                    // A type has one text index: another one's fields are replaced.
                    try Self.drop(&definitions, where: { $0.isText && $0.typeName == definition.typeName }, statements)
                }
                try statements.createQueryIndex(definition)
                definitions.append(definition)
                try Self.record(definitions, statements)
                return true
            }
        })
    }

    /// Drops the index `definition` names (its type's text index, when it is a text index,
    /// whatever its fields); `false` when the store has none.
    func droppingQueryIndex(_ definition: QueryIndexDefinition) -> StoreWork<Bool> {
        StoreWork(operation: "drop an index of \(definition.typeName)", access: .write { statements in
            try Store.transaction(statements) {
                var definitions = try Self.recorded(statements)
                let count = definitions.count
                try Self.drop(&definitions, where: {
                    definition.isText ? $0.isText && $0.typeName == definition.typeName : $0.name == definition.name
                }, statements)
                guard definitions.count < count else { return false }
                try Self.record(definitions, statements)
                return true
            }
        })
    }

    /// Drops every index of the store, text and query ones, in the caller's transaction: what
    /// an encryption does first. Each holds properties of the objects in clear (a text index
    /// the words, a query index the values), and reads nothing of an encrypted row (a garage
    /// that encrypts refuses both, and the queries that would read them).
    static func droppingQueryIndexes(_ statements: any RowWriteStatements) throws {
        var definitions = try recorded(statements)
        guard !definitions.isEmpty else { return }
        try drop(&definitions, where: { _ in true }, statements)
        try record(definitions, statements)
    }

    /// The recorded indexes, by type name then name.
    func readingQueryIndexes() -> StoreWork<[QueryIndexDefinition]> {
        StoreWork(operation: "list the query indexes", access: .read { statements in
            try Self.recorded(statements).sorted { ($0.typeName, $0.name) < ($1.typeName, $1.name) }
        })
    }
}
