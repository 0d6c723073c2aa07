import Foundation
import GarageLiteCore

// Reading many objects by identifier in one access and one snapshot: a page of a sync server's
// download (each object with the server's state of it), a screen of objects the app lists.
extension Garage {
    /// Retrieves the objects of type `T` parked under `identifiers`, in their order: each with
    /// every object it references, or `nil` when there is none. All come from one snapshot of
    /// the store, in one access: 500 objects cost one call, not 500.
    ///
    /// ```swift
    /// let notes = try garage.retrieve(Note.self, identifiers: ["n1", "n2", "n3"])
    /// // [Note?]: notes[1] is nil when "n2" is not parked
    /// ```
    ///
    /// - throws: The errors of ``retrieve(_:identifier:)-1mhtr``, for the first object that fails.
    public func retrieve<T: Decodable & SendableMetatype, ID: GarageIdentifier>(_ type: T.Type, identifiers: [ID]) throws -> [T?] {
        try run(retrieving(T.self, identifiers))
    }

    /// Retrieves the objects of type `T` parked under `identifiers` (see
    /// ``retrieve(_:identifiers:)-49eiq``) without blocking the calling thread.
    public nonisolated(nonsending) func retrieve<T: Decodable & SendableMetatype, ID: GarageIdentifier>(
        _ type: T.Type, identifiers: [ID]
    ) async throws -> [T?] {
        try await run(retrieving(T.self, identifiers))
    }

    /// Runs `body` with one snapshot of the store (this call's pending changes included), in
    /// one access: what it reads through it is consistent, whatever other writers commit.
    package nonisolated(nonsending) func readingSnapshot<R: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (GarageSnapshot) throws -> R
    ) async throws -> R {
        try await run(snapshotReading(operation, body))
    }
}

extension Garage {
    /// The engine's pool of connections now, when it keeps one (PostgreSQL): for a server's
    /// metrics. `nil` for SQLite.
    package var connectionPoolUse: ConnectionPoolUse? {
        (store.engine as? any PoolsConnections)?.connectionPoolUse
    }
}

extension String {
}

/// One snapshot of a garage's store, read inside ``Garage/readingSnapshot(_:_:)``.
package struct GarageSnapshot {
    let view: StoreView
    let configuration: Garage.Configuration

    /// The objects `keys` names, as `T`, each with what it references; `nil` for each missing.
    func retrieve<T: Decodable & SendableMetatype>(_ type: T.Type, keys: [ObjectKey]) throws -> [T?] {
        let decoder = configuration.decoder(view)
        return try view.rows(keys).map { row in try row.map { try configuration.decode(T.self, $0, with: decoder) } }
    }

    /// The objects of the stored type `typeName` under `identifiers`, as `T`; `nil` for each missing.
    package func retrieve<T: Decodable & SendableMetatype>(_ type: T.Type, typeName: String, identifiers: [String]) throws -> [T?] {
        try retrieve(T.self, keys: identifiers.map { ObjectKey(typeName: typeName, identifier: $0) })
    }

    /// The JSON of the objects of the stored type `typeName` under `identifiers`, as the store
    /// holds it (decrypted), for each whose JSON Foundation's `JSONDecoder` (default strategies)
    /// reads back as the garage would: the same value as decoding the object here and encoding
    /// it with a default `JSONEncoder`, without either. `nil` for each missing, deleted, or
    /// held in a form of the garage's own: an object that references others (its JSON holds
    /// their stubs), one with a polymorphic value or a subclass (`@type`), or any object when
    /// the garage writes dates other than as `JSONEncoder` does by default. (Data is base64, a
    /// URL its string, a date its `timeIntervalSinceReferenceDate`: the garage's defaults are
    /// `JSONEncoder`'s.) A sync server sends such JSON as it is.
    package func foundationJSON(typeName: String, identifiers: [String]) throws -> [String?] {
        guard case .deferredToDate = configuration.dateEncodingStrategy else { return identifiers.map { _ in nil } }
        return try json(typeName: typeName, identifiers: identifiers) { row in
            (row.references == "[]" || row.references.isEmpty) && !(row.isEncrypted && configuration.encryption.delegate == nil)
        }.map { json in json.flatMap { $0.containsTypeMarker ? nil : $0 } }
    }

    /// The JSON of the objects of the stored type `typeName` under `identifiers`, as the store
    /// holds it (decrypted); `nil` for each missing.
    package func json(typeName: String, identifiers: [String]) throws -> [String?] {
        try json(typeName: typeName, identifiers: identifiers) { _ in true }
    }

    /// The JSON of each live row under `identifiers` that `taking` takes, decrypted; `nil` for the others.
    func json(typeName: String, identifiers: [String], taking: (StoredRow) -> Bool) throws -> [String?] {
        try view.rows(identifiers.map { ObjectKey(typeName: typeName, identifier: $0) }).map { row in
            guard let row, !row.isDeleted, taking(row) else { return nil }
            return try Garage.records([row], configuration.encryption).first?.json
        }
    }
}
