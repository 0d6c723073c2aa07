import Foundation
import GarageLiteCore

// The indexes an app declares for its queries (Storage/Store+QueryIndexes.swift).
extension Garage {
    /// Creates an index of the objects of type `T` on `fields`, unless the store has it: a
    /// query that compares one of them with a value (`==`, `<`, … ; the first field of the index
    /// for SQLite's planner) then reads the index rather than every object of the type.
    ///
    /// ```swift
    /// try garage.index(Note.self, on: Field("notebook"))
    /// let work = try garage.retrieve(Query(Note.self).filter(Field("notebook") == "Work"))
    /// ```
    ///
    /// The index is an expression index of the engine (SQLite's over `json_extract`,
    /// PostgreSQL's over the `json` value), kept by the engine on every write of the type, and
    /// recorded in the store: `indexes()` lists it, `garage stats` shows it. Creating
    /// it reads every object of the type once. Returns whether it created it.
    ///
    /// - throws: ``GarageError/invalidQuery(typeName:query:reason:)`` for a field the type
    ///   doesn't encode, one that holds arrays, objects or values of several kinds (an index
    ///   orders strings, numbers, booleans or dates), and in a garage that encrypts its objects.
    @discardableResult
    public func index<T: Decodable>(_ type: T.Type, on fields: Field...) throws -> Bool {
        try run(store.creatingQueryIndex(indexDefinition(T.self, fields)))
    }

    /// Creates an index (see `index(_:on:)`) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func index<T: Decodable>(_ type: T.Type, on fields: Field...) async throws -> Bool {
        try await run(store.creatingQueryIndex(indexDefinition(T.self, fields)))
    }

    /// Drops the index of the objects of type `T` on `fields`; returns whether the store had it.
    @discardableResult
    public func dropIndex<T: Decodable>(_ type: T.Type, on fields: Field...) throws -> Bool {
        try run(store.droppingQueryIndex(QueryIndexDefinition(typeName: storedTypeName(T.self), fields: fields, kinds: [])))
    }

    /// Drops an index (see `dropIndex(_:on:)`) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func dropIndex<T: Decodable>(_ type: T.Type, on fields: Field...) async throws -> Bool {
        try await run(store.droppingQueryIndex(QueryIndexDefinition(typeName: storedTypeName(T.self), fields: fields, kinds: [])))
    }

    /// Creates the text index of the objects of type `T` on `fields` (strings, or arrays of
    /// strings), for text searches (``Query/search(_:)``), replacing the type's text index on
    /// other fields; returns whether it changed the store.
    ///
    /// ```swift
    /// try garage.textIndex(Note.self, on: Field("title"), Field("body"), Field("tags"))
    /// let hits = try garage.retrieve(Query(Note.self).search("milk bread"))
    /// ```
    ///
    /// On SQLite it is an FTS5 table (tokenizer `unicode61`, diacritics kept) kept by triggers on
    /// every write of the type; on PostgreSQL a GIN index of the `tsvector` of the `simple`
    /// configuration. Both hold a copy of the words: the README's "Querying" says what that
    /// means for a store you encrypt later. Creating it reads every object of the type once.
    ///
    /// - throws: ``GarageError/invalidQuery(typeName:query:reason:)`` for a field the type
    ///   doesn't encode, one that holds no strings, and in a garage that encrypts its objects.
    @discardableResult
    public func textIndex<T: Decodable>(_ type: T.Type, on fields: Field...) throws -> Bool {
        try run(store.creatingQueryIndex(textIndexDefinition(T.self, fields)))
    }

    /// Creates the text index of a type (see `textIndex(_:on:)`) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func textIndex<T: Decodable>(_ type: T.Type, on fields: Field...) async throws -> Bool {
        try await run(store.creatingQueryIndex(textIndexDefinition(T.self, fields)))
    }

    /// Drops the text index of the objects of type `T`; returns whether the store had one.
    @discardableResult
    public func dropTextIndex<T: Decodable>(_ type: T.Type) throws -> Bool {
        try run(store.droppingQueryIndex(QueryIndexDefinition(typeName: storedTypeName(T.self), fields: [], kinds: [.text])))
    }

    /// Drops the text index of a type (see `dropTextIndex(_:)`) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func dropTextIndex<T: Decodable>(_ type: T.Type) async throws -> Bool {
        try await run(store.droppingQueryIndex(QueryIndexDefinition(typeName: storedTypeName(T.self), fields: [], kinds: [.text])))
    }

    /// The indexes the store has for queries, by type name.
    public func indexes() throws -> [QueryIndex] {
        try run(store.readingQueryIndexes()).map { QueryIndex(typeName: $0.typeName, fields: $0.fields, isText: $0.isText) }
    }

    /// The indexes the store has for queries (see `indexes()`) without blocking the
    /// calling thread.
    public nonisolated(nonsending) func indexes() async throws -> [QueryIndex] {
        try await run(store.readingQueryIndexes()).map { QueryIndex(typeName: $0.typeName, fields: $0.fields, isText: $0.isText) }
    }
}
