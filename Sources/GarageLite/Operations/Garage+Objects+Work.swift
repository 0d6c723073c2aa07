// The work behind the entry points of Garage+Objects.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// Parks `object`, then reads it back when it is a struct (a class instance got its new
    /// revisions from the park): what `park(&object)` sets it to, or `nil` to leave it.
    func parkingAndReading<T: Codable & SendableMetatype>(_ object: T, children: ChildParking) -> StoreCall<(ParkReport, T?)> {
        parking(children: children) { graph in [try graph.encodeRoot(object)] }.then { report, roots in
            guard !(T.self is AnyClass), let key = roots.first else { return .done((report, nil)) }
            return StoreCall(self.retrieving(T.self, key: key)) { .done((report, $0)) }
        }
    }

    /// Parks `objects`: streamed to the writer when there are many and the call writes
    /// straight to the store (see ``streaming(_:children:)``), recorded as one set of changes
    /// otherwise.
    func parkingAll<T: Encodable>(_ objects: [T], children: ChildParking) -> StoreCall<ParkReport> {
        sealingWithCurrentKey {
            guard let stream = try self.streaming(objects, children: children) else {
                return self.parking(objects, children: children)
            }
            return self.store.writingStreaming(stream.operation, next: stream.next).map(stream.finish)
        }
    }

    /// Rows handed to the writer at a time.
    static let streamingBatchSize = 256

    /// The changes that park objects, and what a park needs of their encoding after it.
    struct Parking {
        /// What the park does, in words, for errors: built only when one needs it.
        var operation: @Sendable () -> String
        var changes: ChangeSet
        /// The encoder, which holds the ``Revisioned`` class instances to update.
        var graph: GraphEncoder
        var roots: [ObjectKey]

        /// The check a park runs on the store as the call sees it (in the write transaction
        /// when it writes to the store): it decides the changes to record.
        var guarding: @Sendable (StoreView) throws -> (ChangeSet, GuardedChanges) {
            let changes = changes
            return { view in
                let guarded = try changes.guardingRevisions(in: view)
                return (guarded.changes, guarded)
            }
        }

        /// Gives the ``Revisioned`` class instances written their new revisions; returns the report.
        @discardableResult
        func finish(_ guarded: GuardedChanges) -> ParkReport {
            graph.setRevisions(guarded.revisions)
            return ParkReport(keptChildren: guarded.keptChildren)
        }
    }

    /// Parks `objects`: encodes (and encrypts) them with every object they reference into the
    /// changes that park them, each row guarded by its revision and `children`, and records
    /// them.
    func parking<T: Encodable>(_ objects: [T], children: ChildParking) -> StoreCall<ParkReport> {
        parking(children: children) { graph in try objects.map { try graph.encodeRoot($0) } }.map { report, _ in report }
    }

    /// Parks the record `value` under `identifier`; returns the identifier, as stored.
    func parking<T: Encodable, ID: GarageIdentifier>(_ value: T, identifier: ID) -> StoreCall<String> {
        parking(children: .refuseStale) { graph in
            [try graph.encodeRoot(value, identifier: try Identity.string(fromID: identifier))]
        }.map { _, roots in roots[0].identifier }
    }

    /// Parks the rows `encode` encodes (its roots, and the objects they reference), sealed
    /// with the current key (see ``sealingWithCurrentKey(_:)``); returns the report and the keys
    /// of the roots.
    func parking(
        children: ChildParking, _ encode: @escaping (GraphEncoder) throws -> [ObjectKey]
    ) -> StoreCall<(ParkReport, [ObjectKey])> {
        sealingWithCurrentKey {
            let parking = try self.encoding(children: children, encode)
            let operation = parking.operation
            return self.recording(operation(), preparing: parking.guarding, skipping: nil) { (parking.finish($0), parking.roots) }
        }
    }

    /// The changes of the rows `encode` encodes (its roots, and the objects they reference).
    func encoding(children: ChildParking, _ encode: (GraphEncoder) throws -> [ObjectKey]) throws -> Parking {
        let configuration = configuration()
        let graph = configuration.encoder()
        let roots = try encode(graph)
        var changes = ChangeSet()
        let handedOut = configuration.handedOutRevisions(of: graph.rows, children: children)
        for (index, row) in graph.rows.enumerated() {
            var (key, payload) = try configuration.encryption.seal(row)
            payload.revisionGuard = RevisionGuard(revision: ProvisionalRevisions.resolve(row.revision), isRoot: row.isRoot,
                                                   children: children, handedOutRevision: handedOut[index])
            payload.keepsSyncing = configuration.keepsParkedSyncingStatus
            changes.record(.park(payload), for: key)
        }
        let first = graph.rows.first?.key
        return Parking(operation: { first.map { "park \($0)" } ?? "park nothing" }, changes: changes, graph: graph, roots: roots)
    }

    /// The batches of a streaming `parkAll`, encoded on demand, when the call writes straight
    /// to the store (autosave on, nothing unsaved, outside a transaction); `nil` otherwise.
    func streaming<T: Encodable>(
        _ objects: [T], children: ChildParking
    ) throws -> Streaming? {
        guard objects.count >= Self.streamingThreshold, isAutosaveEnabled, !store.hasUnsavedChanges,
              transactionChanges() == nil else { return nil }
        let configuration = configuration()
        let graph = configuration.encoder()
        // An index rather than a slice's `popFirst()`, which, unspecialized, cost about 3,000
        // instructions an object.
        var position = 0
        let next = { () throws -> RowStream.Batch? in
            while graph.rows.count < Self.streamingBatchSize, position < objects.count {
                try graph.encodeRoot(objects[position])
                position += 1
            }
            let rows = graph.takeRows()
            let handedOut = configuration.handedOutRevisions(of: rows, children: children)
            return rows.isEmpty ? nil : try rows.enumerated().map { index, row in
                var (key, payload) = try configuration.encryption.seal(row)
                payload.revisionGuard = RevisionGuard(revision: ProvisionalRevisions.resolve(row.revision), isRoot: row.isRoot,
                                                   children: children, handedOutRevision: handedOut[index])
                payload.keepsSyncing = configuration.keepsParkedSyncingStatus
                return (key, payload)
            }
        }
        return Streaming(operation: "park \(objects.count) \(try storedTypeName(T.self)) objects", graph: graph, next: next)
    }

    /// The batches of a streaming `parkAll` (see ``streaming(_:children:)``).
    struct Streaming {
        var operation: String
        var graph: GraphEncoder
        var next: () throws -> RowStream.Batch?

        /// Gives the ``Revisioned`` class instances written their new revisions; returns the report.
        func finish(_ written: RowStream.Written) -> ParkReport {
            graph.setRevisions(written.revisions)
            return ParkReport(keptChildren: written.keptChildren.sorted())
        }
    }

    /// The key of `object`, for `operation` ("delete"), which names it in errors.
    func key<T>(of object: T, for operation: @autoclosure () -> String) throws -> ObjectKey {
        try Identity.checkIsObject(T.self, operation: operation())
        let typeName = try storedTypeName(T.self)
        if let identifier = try TypeInfo.declaredIdentifier(of: object) {
            return ObjectKey(typeName: typeName, identifier: identifier)
        }
        guard let encodable = object as? any Encodable else {
            throw GarageError.missingConformance(typeName)
        }
        return ObjectKey(typeName: typeName, identifier: try contentIdentifier(of: encodable))
    }

    func contentIdentifier<E: Encodable>(of object: E) throws -> String {
        try configuration().encoder().identifier(of: object)
    }

}

extension Garage.Configuration {
    /// An encoder for one park (or one rewrite) with these settings.
    func encoder() -> GraphEncoder {
        let encoder = GraphEncoder(dateStrategy: dateEncodingStrategy, context: Garage.threadContext, registry: registry)
        encoder.contentIdentifier = encryption.contentIdentifier
        return encoder
    }

    /// The revisions at which the children among `rows` were handed out with the JSON they
    /// are parked with (``HandedOutVersions``), by index in `rows`; none when `children` is
    /// ``ChildParking/all``, which writes every child.
    func handedOutRevisions(of rows: [EncodedRow], children: ChildParking) -> [Int: Int64] {
        guard children != .all else { return [:] }
        var candidates: [(key: ObjectKey, dataHash: UInt64)] = [], indexes: [Int] = []
        for (index, row) in rows.enumerated() where !row.isRoot {
            candidates.append((row.key, HandedOutVersions.hash(row.json)))
            indexes.append(index)
        }
        return Dictionary(uniqueKeysWithValues: handedOut.revisions(of: candidates).map { (indexes[$0.key], $0.value) })
    }

    /// A decoder that resolves references through `view`, decrypting the rows it reads; with
    /// `bases`, each row reads as its base where it has one (``StoredRow/base``): the graph as
    /// both sides last had it, children included, for a three-way merge.
    func decoder(_ view: StoreView, bases: Bool = false) -> GraphDecoder {
        let encryption = encryption
        let decoder = GraphDecoder(dateDecoding: dateDecoding, context: Garage.threadContext, registry: registry) { key in
            guard var row = try view.row(key) else { return nil }
            if bases, let base = try view.statements.rowOrTombstone(key, for: .all)?.base { row.data = base }
            return try encryption.open(row)
        }
        if let delegate = dataEncryptionDelegate {
            decoder.decryptNested = { try delegate.decrypt($0) }
        }
        // A base is no version the app was handed.
        if !bases { decoder.handedOut = handedOut }
        decoder.rememberedDeletion = { key in
            // A deletion the store remembers (a tombstone: the object may be on the server), with
            // the version it deleted.
            guard let tombstone = try view.statements.rowOrTombstone(key, for: .content), tombstone.isDeleted,
                  !tombstone.data.isEmpty else { return nil }
            return try encryption.open(tombstone)
        }
        return decoder
    }

    /// The object `row` holds, decrypted and decoded by `decoder`.
    func decode<T: Decodable & SendableMetatype>(_ type: T.Type, _ row: StoredRow, with decoder: GraphDecoder) throws -> T {
        try decoder.decodeRequested(T.self, from: encryption.open(row))
    }

}
