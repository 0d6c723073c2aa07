import Foundation

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
    /// - throws: The errors of ``retrieve(_:identifier:)-5uq1f``, for the first object that fails.
    public func retrieve<T: Decodable & SendableMetatype, ID: GarageIdentifier>(_ type: T.Type, identifiers: [ID]) throws -> [T?] {
        let keys = try keys(T.self, identifiers)
        let configuration = configuration()
        return try run(reading("retrieve \(keys.count) \(Identity.displayName(T.self)) objects") { view in
            try GarageSnapshot(view: view, configuration: configuration).retrieve(T.self, keys: keys)
        })
    }

    /// Retrieves the objects of type `T` parked under `identifiers` (see
    /// ``retrieve(_:identifiers:)-3d24p``) without blocking the calling thread.
    public nonisolated(nonsending) func retrieve<T: Decodable & SendableMetatype, ID: GarageIdentifier>(
        _ type: T.Type, identifiers: [ID]
    ) async throws -> [T?] {
        let keys = try keys(T.self, identifiers)
        let configuration = configuration()
        return try await run(reading("retrieve \(keys.count) \(Identity.displayName(T.self)) objects") { view in
            try GarageSnapshot(view: view, configuration: configuration).retrieve(T.self, keys: keys)
        })
    }

    /// Runs `body` with one snapshot of the store (this call's pending changes included), in
    /// one access: what it reads through it is consistent, whatever other writers commit.
    package nonisolated(nonsending) func readingSnapshot<R: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (GarageSnapshot) throws -> R
    ) async throws -> R {
        let configuration = configuration()
        return try await run(reading(operation) { view in try body(GarageSnapshot(view: view, configuration: configuration)) })
    }

    private func keys<T, ID: GarageIdentifier>(_ type: T.Type, _ identifiers: [ID]) throws -> [ObjectKey] {
        let typeName = try storedTypeName(T.self)
        return try identifiers.map { ObjectKey(typeName: typeName, identifier: try Identity.string(fromID: $0)) }
    }
}

/// One snapshot of a garage's store, read inside ``Garage/readingSnapshot(_:_:)``.
package struct GarageSnapshot {
    let view: StoreView
    let configuration: Garage.Configuration

    /// The objects `keys` names, as `T`, each with what it references; `nil` for each missing.
    func retrieve<T: Decodable & SendableMetatype>(_ type: T.Type, keys: [ObjectKey]) throws -> [T?] {
        let decoder = configuration.decoder(view)
        return try keys.map { key in try view.row(key).map { try configuration.decode(T.self, $0, with: decoder) } }
    }

    /// The objects of the stored type `typeName` under `identifiers`, as `T`; `nil` for each missing.
    package func retrieve<T: Decodable & SendableMetatype>(_ type: T.Type, typeName: String, identifiers: [String]) throws -> [T?] {
        try retrieve(T.self, keys: identifiers.map { ObjectKey(typeName: typeName, identifier: $0) })
    }

    /// The JSON of the objects of the stored type `typeName` under `identifiers`, as the store
    /// holds it (decrypted); `nil` for each missing.
    package func json(typeName: String, identifiers: [String]) throws -> [String?] {
        try identifiers.map { identifier in
            guard let row = try view.row(ObjectKey(typeName: typeName, identifier: identifier)), !row.isDeleted else { return nil }
            return try Garage.records([row], configuration.encryption).first?.json
        }
    }
}

extension Garage {
    /// The engine's pool of connections now, when it keeps one (PostgreSQL): for a server's
    /// metrics. `nil` for SQLite.
    package var connectionPoolUse: ConnectionPoolUse? {
        (store.engine as? any PoolsConnections)?.connectionPoolUse
    }
}
