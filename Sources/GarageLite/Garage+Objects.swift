import Foundation
import GRDB

// Parking, retrieving, deleting and counting objects. Each operation is prepared once
// (pure work: encoding, identifiers) and then run synchronously or asynchronously.
extension Garage {
    // MARK: - Parking

    /// Parks `object`: stores a snapshot of it, replacing the one stored under the same type
    /// and identifier. Every nested `Identifiable` value is parked as its own row, and the
    /// whole graph is written in one transaction.
    ///
    /// ```swift
    /// try garage.park(person)      // person, and person.brother as its own row
    /// ```
    ///
    /// The identifier is the object's `id` when it is `Identifiable`, otherwise a hash of its
    /// content when it is `Hashable` (see ``identifier(for:)``). A ``Syncable`` object's
    /// status is stored in its row.
    ///
    /// - throws: ``GarageError/missingConformance(_:)`` when the object is neither
    ///   `Identifiable` nor `Hashable`; ``GarageError/unsupportedIDConformance(_:)`` when an
    ///   `Identifiable` ID anywhere in the graph is not a `String`, `UUID` or
    ///   `LosslessStringConvertible`; `EncodingError`; the encryption delegate's errors;
    ///   ``GarageError/storeBusy(operation:path:)``. When it throws, nothing was written.
    public func park<T: Encodable>(_ object: T) throws {
        let (operation, changes) = try parking { try $0.encodeRoot(object) }
        try write(operation, changes) { _, _ in }
    }

    /// Parks `object` (see ``park(_:)``) without blocking the calling thread.
    public func park<T: Encodable>(_ object: T) async throws {
        let (operation, changes) = try parking { try $0.encodeRoot(object) }
        try await write(operation, changes) { _, _ in }
    }

    /// Parks every object of `objects` (see ``park(_:)-7fg4m``), all in one transaction: if one
    /// fails, none is parked.
    ///
    /// ```swift
    /// try garage.parkAll([brother, sister, mom, dad])
    /// ```
    ///
    /// From ``streamingThreshold`` objects on, when the call writes straight to the store
    /// (autosave on, nothing unsaved, outside a transaction), the rows are written on the
    /// store's writer while the next objects are encoded on this thread: the transaction, and
    /// its lock on the store, then last as long as the encoding, and memory stays bounded. An
    /// `encode(to:)` or encryption delegate that parks into the garage meanwhile gets
    /// ``GarageError/reentrantCall(operation:)``.
    public func parkAll<T: Encodable>(_ objects: [T]) throws {
        if objects.count >= Self.streamingThreshold, try parkAllStreaming(objects) {
            return
        }
        let (operation, changes) = try parking { graph in
            for object in objects { try graph.encodeRoot(object) }
        }
        try write(operation, changes) { _, _ in }
    }

    /// Parks every object of `objects` (see ``parkAll(_:)``) without blocking the calling thread.
    public func parkAll<T: Encodable>(_ objects: [T]) async throws {
        let (operation, changes) = try parking { graph in
            for object in objects { try graph.encodeRoot(object) }
        }
        try await write(operation, changes) { _, _ in }
    }

    /// From this many objects, `parkAll` writes rows while it encodes the next ones.
    public static let streamingThreshold = 1_000
    /// Rows handed to the writer at a time.
    private static let streamingBatchSize = 256

    /// Parks `objects` in one transaction that writes rows as they are encoded, when the call
    /// writes straight to the store; returns `false`, having done nothing, otherwise.
    private func parkAllStreaming<T: Encodable>(_ objects: [T]) throws -> Bool {
        let configuration = configuration()
        let graph = GraphEncoder(dateStrategy: configuration.dateEncodingStrategy)
        return try writeStreaming("park \(objects.count) \(Identity.typeName(T.self)) objects") { send in
            for object in objects {
                try graph.encodeRoot(object)
                if graph.rows.count >= Self.streamingBatchSize {
                    try send(try Self.payloads(of: graph.takeRows(), configuration))
                }
            }
            try send(try Self.payloads(of: graph.takeRows(), configuration))
        }
    }

    /// Encodes (and encrypts) a graph into the changes that park it.
    private func parking(_ encode: (GraphEncoder) throws -> Void) throws -> (operation: String, changes: ChangeSet) {
        let configuration = configuration()
        let graph = GraphEncoder(dateStrategy: configuration.dateEncodingStrategy)
        try encode(graph)
        var changes = ChangeSet()
        for (key, payload) in try Self.payloads(of: graph.rows, configuration) {
            changes.record(.park(payload), for: key)
        }
        let operation = graph.rows.first.map { "park \($0.key)" } ?? "park nothing"
        return (operation, changes)
    }

    /// What each encoded row writes: its JSON, encrypted when the garage has a delegate.
    private static func payloads(of rows: [EncodedRow], _ configuration: Configuration) throws -> RowStream.Batch {
        try rows.map { row in
            let data: String
            let isEncrypted: Bool
            if let delegate = configuration.dataEncryptionDelegate {
                data = try delegate.encrypt(Data(row.json.utf8))
                isEncrypted = true
            } else {
                data = row.json
                isEncrypted = false
            }
            return (row.key, RowPayload(
                data: data, isEncrypted: isEncrypted, syncStatus: row.syncStatus,
                references: ReferenceList.encode(row.references), isRoot: row.isRoot))
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
        try key(of: object).identifier
    }

    func key<T>(of object: T) throws -> RowKey {
        let typeName = Identity.typeName(T.self)
        if let identifier = try Identity.declaredIdentifier(of: object) {
            return RowKey(type: typeName, identifier: identifier)
        }
        guard let encodable = object as? any Encodable else {
            throw GarageError.missingConformance(typeName)
        }
        return RowKey(type: typeName, identifier: try contentIdentifier(of: encodable))
    }

    private func contentIdentifier<E: Encodable>(of object: E) throws -> String {
        try GraphEncoder(dateStrategy: configuration().dateEncodingStrategy).identifier(of: object)
    }

    // MARK: - Retrieving

    /// Retrieves the object of type `T` parked under `identifier`, with every object it
    /// references; `nil` when there is none.
    ///
    /// ```swift
    /// let person = try garage.retrieve(Person.self, identifier: "123-45-6789")
    /// let order = try garage.retrieve(Order.self, identifier: 42)          // an Int ID
    /// ```
    ///
    /// All rows come from one snapshot of the store, so a concurrent writer can't tear the
    /// graph. A reference to a missing row decodes as `nil` where it is optional, and throws
    /// `DecodingError.dataCorrupted` ("Missing Identifiable reference ...") otherwise.
    ///
    /// - parameter type: The type of the object, which names its rows.
    /// - parameter identifier: A `String`, `UUID`, `Int` or other `LosslessStringConvertible`.
    /// - throws: ``GarageError/unsupportedIDConformance(_:)`` for another identifier type;
    ///   `DecodingError`; ``GarageError/referenceCycle(typeName:identifier:cycle:)``;
    ///   ``GarageError/missingEncryptionDelegate(typeName:identifier:)``;
    ///   ``GarageError/decryptionFailed(typeName:identifier:reason:)`` when the delegate fails.
    public func retrieve<T: Decodable, ID>(_ type: T.Type, identifier: ID) throws -> T? {
        let key = RowKey(type: Identity.typeName(T.self), identifier: try Identity.string(fromID: identifier))
        let configuration = configuration()
        guard let pending = pendingChanges() else {
            return try store.readWithoutTransaction("retrieve \(key)") { db in
                try Self.retrieveCommitted(T.self, key, in: db, configuration)
            }
        }
        return try store.read("retrieve \(key)") { db in
            try Self.visibleRow(key, in: db, pending: pending).map {
                try Self.decoder(db, pending, configuration).decode(T.self, from: $0)
            }
        }
    }

    /// Retrieves from the committed store, on a connection outside any transaction: an object
    /// without references is one statement; one with references is read again, with them, in
    /// one read transaction.
    static func retrieveCommitted<T: Decodable>(
        _ type: T.Type, _ key: RowKey, in db: Database, _ configuration: Configuration
    ) throws -> T? {
        guard let row = try Store.contentRow(db, key) else { return nil }
        if row.references == ReferenceList.empty {
            return try decoder(db, nil, configuration).decodeAlone(T.self, from: row)
        }
        return try Store.inSnapshot(db) { db in
            try Store.contentRow(db, key).map { try decoder(db, nil, configuration).decode(T.self, from: $0) }
        }
    }

    /// Retrieves an object (see ``retrieve(_:identifier:)``) without blocking the calling thread.
    public func retrieve<T: Decodable & Sendable, ID>(_ type: T.Type, identifier: ID) async throws -> T? {
        let key = RowKey(type: Identity.typeName(T.self), identifier: try Identity.string(fromID: identifier))
        let configuration = configuration()
        return try await read("retrieve \(key)") { db, pending in
            try Self.visibleRow(key, in: db, pending: pending).map {
                try Self.decoder(db, pending, configuration).decode(T.self, from: $0)
            }
        }
    }

    /// Retrieves every object of type `T`, in identifier order.
    ///
    /// ```swift
    /// let people = try garage.retrieveAll(Person.self)
    /// ```
    ///
    /// It throws the error of the first object that can't be retrieved, which names its type
    /// and identifier; ``retrieveAllLossy(_:)-92q15`` returns the others beside the failures.
    public func retrieveAll<T: Decodable>(_ type: T.Type) throws -> [T] {
        let typeName = Identity.typeName(T.self)
        let configuration = configuration()
        return try read("retrieve all \(typeName)") { db, pending in
            let decoder = Self.decoder(db, pending, configuration)
            return try Self.visibleRows(ofType: typeName, in: db, pending: pending).map { try decoder.decode(T.self, from: $0) }
        }
    }

    /// Retrieves every object of type `T` without blocking the calling thread.
    public func retrieveAll<T: Decodable & Sendable>(_ type: T.Type) async throws -> [T] {
        let typeName = Identity.typeName(T.self)
        let configuration = configuration()
        return try await read("retrieve all \(typeName)") { db, pending in
            let decoder = Self.decoder(db, pending, configuration)
            return try Self.visibleRows(ofType: typeName, in: db, pending: pending).map { try decoder.decode(T.self, from: $0) }
        }
    }

    /// Retrieves every object of type `T` that can be retrieved, and says which can't and why,
    /// where ``retrieveAll(_:)-cq13`` throws at the first object that can't.
    ///
    /// ```swift
    /// let result = try garage.retrieveAllLossy(Person.self)
    /// let people = result.objects                   // every person that could be decoded
    /// for failure in result.failures {              // the others: type, identifier, error
    ///     print(failure)
    /// }
    /// ```
    ///
    /// An object fails when its row can't be decoded: JSON that no longer matches its Swift
    /// type, or is corrupt, a missing required reference, a failed decryption. Errors of the
    /// store itself (SQLite, a busy or damaged file) still throw.
    public func retrieveAllLossy<T: Decodable>(_ type: T.Type) throws -> LossyRetrieval<T> {
        let typeName = Identity.typeName(T.self)
        let configuration = configuration()
        return try read("retrieve all \(typeName)") { db, pending in
            try Self.retrieveEach(T.self, typeName: typeName, in: db, pending: pending, configuration)
        }
    }

    /// Retrieves every object of type `T` that can be retrieved (see ``retrieveAllLossy(_:)``)
    /// without blocking the calling thread.
    public func retrieveAllLossy<T: Decodable & Sendable>(_ type: T.Type) async throws -> LossyRetrieval<T> {
        let typeName = Identity.typeName(T.self)
        let configuration = configuration()
        return try await read("retrieve all \(typeName)") { db, pending in
            try Self.retrieveEach(T.self, typeName: typeName, in: db, pending: pending, configuration)
        }
    }

    /// A decoder that resolves references in `db`'s read transaction, with the pending changes.
    static func decoder(_ db: Database, _ pending: ChangeSet?, _ configuration: Configuration) -> GraphDecoder {
        GraphDecoder(
            dateDecoding: configuration.dateDecoding,
            row: { key in
                guard let pending else { return try Store.contentRow(db, key) }
                return try pending.row(key, in: db, now: Date())
            },
            open: { row in try open(row, delegate: configuration.dataEncryptionDelegate) })
    }

    /// The JSON a row holds, decrypted if need be.
    static func open(_ row: StoredRow, delegate: (any DataEncryptionDelegate)?) throws -> JSONValue {
        do {
            guard row.isEncrypted else {
                return try JSONReader.parse(row.data)
            }
            guard let delegate else {
                throw GarageError.missingEncryptionDelegate(typeName: row.key.type, identifier: row.key.identifier)
            }
            let decrypted: Data
            do {
                decrypted = try delegate.decrypt(row.data)
            } catch let error as GarageError {
                throw error
            } catch {
                throw GarageError.decryptionFailed(typeName: row.key.type, identifier: row.key.identifier,
                                                   reason: String(reflecting: error))
            }
            return try JSONReader.parse(decrypted)
        } catch let failure as JSONReader.Failure {
            throw GarageError.corruptData(
                typeName: row.key.type, identifier: row.key.identifier,
                reason: row.isEncrypted
                    ? "its decrypted JSON is invalid (was it decrypted with another key?): \(failure)"
                    : "its JSON is invalid: \(failure)")
        }
    }

    // MARK: - Deleting

    /// Deletes `object`'s row. Objects it references stay parked, as in GarageStorage.
    ///
    /// ```swift
    /// try garage.delete(person)
    /// ```
    ///
    /// - throws: ``GarageError/failedToRetrieveObject(_:_:)`` when it is not parked.
    public func delete<T: Encodable>(_ object: T) throws {
        let (key, changes) = try deleting(object)
        try write("delete \(key)", changes, check: Self.checkExists(key))
    }

    /// Deletes `object`'s row (see ``delete(_:)``) without blocking the calling thread.
    public func delete<T: Encodable>(_ object: T) async throws {
        let (key, changes) = try deleting(object)
        try await write("delete \(key)", changes, check: Self.checkExists(key))
    }

    private func deleting<T>(_ object: T) throws -> (RowKey, ChangeSet) {
        let key = try key(of: object)
        var changes = ChangeSet()
        changes.record(.delete, for: key)
        return (key, changes)
    }

    /// A check that throws ``GarageError/failedToRetrieveObject(_:_:)`` unless every row exists.
    static func checkExists(_ keys: RowKey...) -> @Sendable (Database, ChangeSet?) throws -> Void {
        checkExists(keys)
    }

    static func checkExists(_ keys: [RowKey]) -> @Sendable (Database, ChangeSet?) throws -> Void {
        { db, pending in
            for key in keys where try visibleRow(key, in: db, pending: pending) == nil {
                throw GarageError.failedToRetrieveObject(key.type, key.identifier)
            }
        }
    }

    /// Deletes every object of type `T`; returns how many there were.
    ///
    /// ```swift
    /// try garage.deleteAll(Person.self)
    /// ```
    @discardableResult
    public func deleteAll<T>(_ type: T.Type) throws -> Int {
        let typeName = Identity.typeName(T.self)
        var changes = ChangeSet()
        changes.record(.deleteAll(type: typeName))
        return try write("delete all \(typeName)", changes) { db, pending in
            try Self.visibleCount(ofType: typeName, in: db, pending: pending)
        }
    }

    /// Deletes every object of every type; returns how many there were.
    @discardableResult
    public func deleteAllObjects() throws -> Int {
        var changes = ChangeSet()
        changes.record(.deleteAll(type: nil))
        return try write("delete all objects", changes) { db, pending in
            guard let pending else { return try Store.count(db) }
            return try pending.types(in: db).reduce(0) { total, type in
                total + (try Self.visibleCount(ofType: type, in: db, pending: pending))
            }
        }
    }

    /// Moves every object parked under the type name `oldClassName` to type `T`, for a type
    /// that was renamed; returns how many moved. An object of type `T` with the same
    /// identifier is replaced. References to the moved objects keep working.
    ///
    /// ```swift
    /// try garage.migrateAll(fromOldClassName: "Employee", to: Person.self)
    /// ```
    @discardableResult
    public func migrateAll<T>(fromOldClassName oldClassName: String, to type: T.Type) throws -> Int {
        let typeName = Identity.typeName(T.self)
        guard oldClassName != typeName else { return 0 }
        var changes = ChangeSet()
        changes.record(.renameType(from: oldClassName, to: typeName))
        return try write("move \(oldClassName) to \(typeName)", changes) { db, pending in
            try Self.visibleCount(ofType: oldClassName, in: db, pending: pending)
        }
    }

    // MARK: - Counting

    /// The number of objects of type `T`.
    public func count<T>(_ type: T.Type) throws -> Int {
        let typeName = Identity.typeName(T.self)
        return try read("count \(typeName)") { db, pending in
            try Self.visibleCount(ofType: typeName, in: db, pending: pending)
        }
    }

    /// The identifiers of every object of type `T`, in order.
    public func identifiers<T>(of type: T.Type) throws -> [String] {
        let typeName = Identity.typeName(T.self)
        return try read("list identifiers of \(typeName)") { db, pending in
            if let pending, pending.touches(type: typeName) {
                return try pending.rows(ofType: typeName, in: db, now: Date()).map(\.key.identifier)
            }
            return try Store.identifiers(db, type: typeName)
        }
    }
}
