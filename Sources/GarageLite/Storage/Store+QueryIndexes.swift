import Foundation

// The indexes an app declares for its queries: created by the engine, and recorded in the
// store's facts (`query_indexes`, a JSON array of their definitions), so that any garage on
// the store lists them.
extension Store {
    /// The fact that records the query indexes.
    static let queryIndexesFact = "query_indexes"

    private static func recorded(_ statements: any RowStatements) throws -> [QueryIndexDefinition] {
        guard let text = try statements.metadata(queryIndexesFact) else { return [] }
        return try JSONDecoder().decode([QueryIndexDefinition].self, from: Data(text.utf8))
    }

    private static func record(_ definitions: [QueryIndexDefinition], _ statements: any RowWriteStatements) throws {
        let data = try JSONEncoder().encode(definitions.sorted { $0.name < $1.name })
        try statements.setMetadata(queryIndexesFact, String(decoding: data, as: UTF8.self))
    }

    /// Creates and records `definition`; `false` when the store has it already.
    func creatingQueryIndex(_ definition: QueryIndexDefinition) -> StoreWork<Bool> {
        StoreWork(operation: "index \(definition.typeName)", access: .write { statements in
            try Store.transaction(statements) {
                var definitions = try Self.recorded(statements)
                guard !definitions.contains(where: { $0.name == definition.name }) else { return false }
                try statements.createQueryIndex(definition)
                definitions.append(definition)
                try Self.record(definitions, statements)
                return true
            }
        })
    }

    /// Drops the index of `typeName` on `paths`; `false` when the store has none.
    func droppingQueryIndex(_ definition: QueryIndexDefinition) -> StoreWork<Bool> {
        StoreWork(operation: "drop an index of \(definition.typeName)", access: .write { statements in
            try Store.transaction(statements) {
                var definitions = try Self.recorded(statements)
                guard let index = definitions.firstIndex(where: { $0.name == definition.name }) else { return false }
                try statements.dropQueryIndex(definitions.remove(at: index))
                try Self.record(definitions, statements)
                return true
            }
        })
    }

    /// The recorded indexes, by type name then name.
    func readingQueryIndexes() -> StoreWork<[QueryIndexDefinition]> {
        StoreWork(operation: "list the query indexes", access: .read { statements in
            try Self.recorded(statements).sorted { ($0.typeName, $0.name) < ($1.typeName, $1.name) }
        })
    }
}
