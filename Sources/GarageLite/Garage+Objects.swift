import Foundation

// Parking objects: thin entry points, each pair running one description of its work (a
// StoreCall, below the public API) synchronously or asynchronously. Retrieving and counting are
// in Garage+Retrieving.swift, deleting in Garage+Deleting.swift.
extension Garage {
    // MARK: - Parking

    /// Parks `object`: stores a snapshot of it, replacing the one stored under the same type
    /// and identifier. Every nested `Identifiable` value (but an ``InlineIdentifiable`` one)
    /// is parked as its own row, and the whole graph is written in one transaction.
    ///
    /// ```swift
    /// try garage.park(person)                           // person, and person.brother as its own row
    /// try garage.park(notebook, children: .keepStored)  // a note the sync job changed stays
    /// try garage.park(notebook, children: .onlyNew)     // notes already stored are left alone
    /// ```
    ///
    /// The identifier is the object's `id` when it is `Identifiable`, otherwise a hash of its
    /// content when it is `Hashable` (see ``identifier(for:)``). A ``Syncable`` object's
    /// status is stored in its row.
    ///
    /// A ``Revisioned`` object (the root, or a child with ``ChildParking/refuseStale``) whose
    /// revision is not its row's refuses the park; the check and the write are one
    /// transaction. After the park, every ``Revisioned`` class instance written, root or
    /// child, has its row's new revision, so it can be edited and parked again; for a struct,
    /// use ``park(_:children:)-9607u``, which takes it `inout`.
    ///
    /// - parameter object: The object to park: `Identifiable`, or `Hashable`.
    /// - parameter children: What happens to the objects `object` references (its children)
    ///   that changed since it was retrieved: by default (``ChildParking/refuseStale``) a
    ///   stale ``Revisioned`` child refuses the park.
    /// - returns: What the park wrote and left alone (``ParkReport``).
    /// - throws: ``GarageError/missingConformance(_:)`` when the object is neither
    ///   `Identifiable` nor `Hashable`; ``GarageError/unsupportedIDConformance(_:)`` when an
    ///   `Identifiable` ID anywhere in the graph is not a `String`, `UUID` or
    ///   `LosslessStringConvertible`;
    ///   ``GarageError/staleObject(typeName:identifier:parkedRevision:storedRevision:)``;
    ///   `EncodingError`; the encryption delegate's errors;
    ///   ``GarageError/storeBusy(operation:path:)``. When it throws, nothing was written.
    @discardableResult
    public func park<T: Encodable>(_ object: T, children: ChildParking = .refuseStale) throws -> ParkReport {
        try run(parking([object], children: children))
    }

    /// Parks `object` (see ``park(_:children:)-553ys``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func park<T: Encodable>(_ object: T, children: ChildParking = .refuseStale) async throws -> ParkReport {
        try await run(parking([object], children: children))
    }

    /// Parks `object` (see ``park(_:children:)-553ys``), then sets it to what the store now
    /// holds, with the new revisions of its ``Revisioned`` parts: the way to edit and park a
    /// struct again and again.
    ///
    /// ```swift
    /// var notebook = try garage.retrieve(Notebook.self, identifier: "nb1")!
    /// notebook.title = "Groceries"
    /// try garage.park(&notebook)          // notebook.revision (and its notes') move on
    /// notebook.title = "Shopping"
    /// try garage.park(&notebook)          // not stale: it knows the revision it wrote
    /// ```
    ///
    /// The object is read back after the park, as ``retrieve(_:identifier:)-5uq1f`` would: a
    /// child left as stored (``ChildParking/keepStored``, ``ChildParking/onlyNew``) comes back
    /// as stored. A class instance is not replaced: its revision (and its children's) is set on
    /// it, as ``park(_:children:)-553ys`` does.
    ///
    /// - throws: the errors of ``park(_:children:)-553ys``, and of the read back (then the park
    ///   was written, and `object` is unchanged).
    @discardableResult
    public func park<T: Codable & SendableMetatype>(_ object: inout T, children: ChildParking = .refuseStale) throws -> ParkReport {
        let (report, stored) = try run(parkingAndReading(object, children: children))
        if let stored { object = stored }
        return report
    }

    /// Parks `object` and sets it to what the store now holds (see ``park(_:children:)-9607u``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func park<T: Codable & SendableMetatype>(
        _ object: inout T, children: ChildParking = .refuseStale
    ) async throws -> ParkReport {
        let (report, stored) = try await run(parkingAndReading(object, children: children))
        if let stored { object = stored }
        return report
    }

    /// Parks `object`, then reads it back when it is a struct (a class instance got its new
    /// revisions from the park): what `park(&object)` sets it to, or `nil` to leave it.
    private func parkingAndReading<T: Codable & SendableMetatype>(_ object: T, children: ChildParking) -> StoreCall<(ParkReport, T?)> {
        parking(children: children) { graph in [try graph.encodeRoot(object)] }.then { report, roots in
            guard !(T.self is AnyClass), let key = roots.first else { return .done((report, nil)) }
            return StoreCall(self.retrieving(T.self, key: key)) { .done((report, $0)) }
        }
    }

    /// Parks every object of `objects` (see ``park(_:children:)-553ys``), all in one
    /// transaction: if one fails, none is parked.
    ///
    /// ```swift
    /// try garage.parkAll([brother, sister, mom, dad])
    /// try garage.parkAll(notebooks, children: .keepStored)
    /// ```
    ///
    /// Every ``Revisioned`` object parked is checked, in the transaction that writes (a
    /// streaming one too): one stale object refuses them all. Afterwards, every
    /// ``Revisioned`` class instance written has its row's new revision.
    ///
    /// From ``streamingThreshold`` objects on, when the call writes straight to the store
    /// (autosave on, nothing unsaved, outside a transaction), the rows are written on the
    /// store's writer while the next objects are encoded on this thread: the transaction, and
    /// its lock on the store, then last as long as the encoding, and memory stays bounded. An
    /// `encode(to:)` or encryption delegate that parks into the garage meanwhile gets
    /// ``GarageError/reentrantCall(operation:)``.
    ///
    /// - parameter objects: The objects to park, of one type.
    /// - parameter children: What happens to the objects they reference, as in
    ///   ``park(_:children:)-553ys``.
    @discardableResult
    public func parkAll<T: Encodable>(_ objects: [T], children: ChildParking = .refuseStale) throws -> ParkReport {
        try run(parkingAll(objects, children: children))
    }

    /// Parks every object of `objects` (see ``parkAll(_:children:)-9ulpr``) without blocking
    /// the calling thread; large arrays stream as they do there, the writer waiting for the
    /// rows this task encodes.
    @discardableResult
    public nonisolated(nonsending) func parkAll<T: Encodable>(_ objects: [T], children: ChildParking = .refuseStale) async throws -> ParkReport {
        try await run(parkingAll(objects, children: children))
    }

    /// Parks `objects`: streamed to the writer when there are many and the call writes
    /// straight to the store (see ``streaming(_:children:)``), recorded as one set of changes
    /// otherwise.
    private func parkingAll<T: Encodable>(_ objects: [T], children: ChildParking) -> StoreCall<ParkReport> {
        sealingWithCurrentKey {
            guard let stream = try self.streaming(objects, children: children) else {
                return self.parking(objects, children: children)
            }
            return self.store.writingStreaming(stream.operation, next: stream.next).map(stream.finish)
        }
    }

    /// Parks `value` under `identifier`, a record: any `Codable` value, without an identity of
    /// its own; returns the identifier, as stored. The value is stored as `park(_:)` stores an
    /// object (its `Identifiable` values as rows of their own); `retrieve(_:identifier:)` reads
    /// it back, `delete(_:identifier:)` deletes it.
    ///
    /// ```swift
    /// try garage.park(Preferences(theme: .dark), identifier: "preferences")
    /// try garage.park(["milk", "eggs"], identifier: "shopping")       // an array, as one record
    /// let list = try garage.retrieve([String].self, identifier: "shopping")
    /// let id = try garage.park(draft, identifier: UUID())             // a generated identifier
    /// ```
    ///
    /// - throws: ``GarageError/invalidIdentifier(typeName:identifier:reason:)`` when `value` is
    ///   `Identifiable` with another `id`, or when `identifier` contains U+0000; the errors of
    ///   ``park(_:children:)-553ys``.
    @discardableResult
    public func park<T: Encodable, ID: GarageIdentifier>(_ value: T, identifier: ID) throws -> String {
        try run(parking(value, identifier: identifier))
    }

    /// Parks `value` under `identifier` (see ``park(_:identifier:)-8mlg``) without blocking
    /// the calling thread.
    @discardableResult
    public nonisolated(nonsending) func park<T: Encodable, ID: GarageIdentifier>(_ value: T, identifier: ID) async throws -> String {
        try await run(parking(value, identifier: identifier))
    }

    /// From this many objects, `parkAll` writes rows while it encodes the next ones.
    public static let streamingThreshold = 1_000
    /// Rows handed to the writer at a time.
    private static let streamingBatchSize = 256

    /// The changes that park objects, and what a park needs of their encoding after it.
    private struct Parking {
        var operation: String
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
    private func parking<T: Encodable>(_ objects: [T], children: ChildParking) -> StoreCall<ParkReport> {
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
            return self.recording(parking.operation, preparing: parking.guarding, skipping: nil) { (parking.finish($0), parking.roots) }
        }
    }

    /// The changes of the rows `encode` encodes (its roots, and the objects they reference).
    private func encoding(children: ChildParking, _ encode: (GraphEncoder) throws -> [ObjectKey]) throws -> Parking {
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
        let operation = graph.rows.first.map { "park \($0.key)" } ?? "park nothing"
        return Parking(operation: operation, changes: changes, graph: graph, roots: roots)
    }

    /// The batches of a streaming `parkAll`, encoded on demand, when the call writes straight
    /// to the store (autosave on, nothing unsaved, outside a transaction); `nil` otherwise.
    private func streaming<T: Encodable>(
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
    private struct Streaming {
        var operation: String
        var graph: GraphEncoder
        var next: () throws -> RowStream.Batch?

        /// Gives the ``Revisioned`` class instances written their new revisions; returns the report.
        func finish(_ written: RowStream.Written) -> ParkReport {
            graph.setRevisions(written.revisions)
            return ParkReport(keptChildren: written.keptChildren.sorted())
        }
    }

    /// The identifier `object` is (or would be) parked under: its `id` when it is
    /// `Identifiable`, otherwise, when it is `Hashable`, the SHA-256 of its JSON (with sorted
    /// keys, references as identifiers, and without its sync status), in hex.
    ///
    /// Unlike GarageStorage's `hashValue`, the content identifier is the same in every process,
    /// so a `Hashable` object parked before a relaunch is found after it. It changes when the
    /// object's content does.
    public func identifier<T: Encodable>(for object: T) throws -> String {
        try key(of: object, for: "identify").identifier
    }

    /// The key of `object`, for `operation` ("delete"), which names it in errors.
    func key<T>(of object: T, for operation: @autoclosure () -> String) throws -> ObjectKey {
        try Identity.checkIsObject(T.self, operation: operation())
        let typeName = try storedTypeName(T.self)
        if let identifier = try Identity.declaredIdentifier(of: object) {
            return ObjectKey(typeName: typeName, identifier: identifier)
        }
        guard let encodable = object as? any Encodable else {
            throw GarageError.missingConformance(typeName)
        }
        return ObjectKey(typeName: typeName, identifier: try contentIdentifier(of: encodable))
    }

    private func contentIdentifier<E: Encodable>(of object: E) throws -> String {
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
