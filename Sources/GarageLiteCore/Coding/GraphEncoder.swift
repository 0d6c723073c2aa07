import Foundation

/// One row produced by parking: an object's JSON and what the row needs besides.
package struct EncodedRow {
    package var key: ObjectKey
    package var json: String
    /// The object's status when it is ``Syncable``.
    package var syncStatus: SyncStatus?
    /// The revision the object was retrieved at, when it is ``Revisioned``.
    package var revision: Int64?
    package var references: [ObjectKey]
    package var isRoot: Bool
}

/// Turns objects into rows: one row per object parked, plus one row per nested
/// `Identifiable` value, which is replaced in its parent's JSON by its identifier (an
/// ``InlineIdentifiable`` one stays inline).
///
/// Encoding is pure: it does no I/O. The rows of one `GraphEncoder` are written in one
/// transaction. An object reached twice (or through a cycle) is encoded once.
package final class GraphEncoder {
    package let dateStrategy: JSONEncoder.DateEncodingStrategy
    package private(set) var rows: [EncodedRow] = []
    private var rowIndex: [ObjectKey: Int] = [:]
    /// Keys of rows encoded or being encoded: a reference to one of them is just a stub.
    private var visited: Set<ObjectKey> = []
    /// Referenced objects waiting to be encoded. Encoding them from a queue, rather than
    /// from inside their parent's encoding, keeps a long chain of references off the stack.
    private var queue: [() throws -> Void] = []
    /// The ``Revisioned`` class instances encoded, by row: a successful park sets their
    /// revision to their row's new one.
    package private(set) var revisionedInstances: [(key: ObjectKey, object: any Revisioned)] = []

    /// What a fresh-stack thread must see of the calling thread (see ``ThreadStack``).
    package let context: ThreadContext

    /// The references to leave out of the JSON: a property holding one is not written (it
    /// reads back as `nil`), an array or dictionary entry holding one is dropped. `nil` (the
    /// park's case) leaves nothing out. Deleting with ``DeleteRule/nullify(in:)`` sets it.
    package var omits: ((ObjectKey) -> Bool)?
    /// How many references ``omits`` left out.
    package private(set) var omittedCount = 0

    /// Whether rows are written by the ``StreamEncoder`` (falling back to the tree of
    /// ``EncodedSlot``s for a row it can't stream); `false` builds every row as a tree, as tests
    /// compare.
    package var streams = true
    /// How many rows the stream gave to the tree (see ``StreamEncoder``).
    package private(set) var rowsGivenToTree = 0
    /// The stream encoder, kept for the next row with its buffers.
    private var stream: StreamEncoder?

    /// `object`'s JSON written by the stream encoder, kept from row to row (a row's encoding
    /// never starts another's: the rows it references wait in ``queue``); `nil` when it gave
    /// the row to the tree, its omissions then uncounted.
    private func stream<T: Encodable>(_ object: T, as row: RowEncoding) -> [UInt8]? {
        let encoder = stream ?? StreamEncoder(row: row)
        stream = encoder
        let omitted = omittedCount
        guard let json = encoder.encodeRow(object, of: row) else {
            omittedCount = omitted
            rowsGivenToTree += 1
            return nil
        }
        return json
    }

    /// The types whose instances may be parked where another type is declared.
    package let registry: RegisteredTypes
    /// The identifier of a `Hashable` object, from its canonical JSON: keyed when the garage's
    /// cipher keys it (``RowBoundEncryptionDelegate/contentIdentifier(ofCanonicalJSON:)``),
    /// otherwise ``Identity/contentIdentifier(ofJSON:)``.
    package var contentIdentifier: @Sendable ([UInt8]) -> String = Identity.contentIdentifier(ofJSON:)

    package init(dateStrategy: JSONEncoder.DateEncodingStrategy, context: ThreadContext, registry: RegisteredTypes) {
        self.dateStrategy = dateStrategy
        self.context = context
        self.registry = registry
    }

    /// Encodes `object` as a root row (and the rows it references); returns its key.
    @discardableResult
    package func encodeRoot<T: Encodable>(_ object: T) throws -> ObjectKey {
        try Identity.checkIsObject(T.self, operation: "park")
        let storedClass = registry.storedClass(of: T.self)
        let typeName = try storedClass?.name ?? Identity.typeName(T.self)
        if let identifier = try TypeInfo.declaredIdentifier(of: object) {
            let key = ObjectKey(typeName: typeName, identifier: identifier)
            visited.insert(key)
            try store(object, key: key, isRoot: true, tagged: storedClass != nil)
            try drainQueue()
            return key
        }
        guard object is any Hashable else {
            throw GarageError.missingConformance(typeName)
        }
        let content: Content
        do {
            content = try encodeContent(object, canonical: true)
        } catch let error as EncodingError {
            throw error.locating(typeName) // its identifier would be the hash of what failed
        }
        let key = ObjectKey(typeName: typeName, identifier: contentIdentifier(content.json))
        visited.insert(key)
        add(EncodedRow(key: key, json: String(decoding: content.json, as: UTF8.self), syncStatus: content.syncStatus,
                       revision: content.revision, references: content.references, isRoot: true))
        noteInstance(object, key: key)
        try drainQueue()
        return key
    }

    /// Encodes `object` as a root row under `identifier`, whatever its type (a record: it needs
    /// no identity of its own), with the rows it references; returns its key.
    ///
    /// - throws: ``GarageError/invalidIdentifier(typeName:identifier:reason:)`` when the object
    ///   is `Identifiable` with another `id`: it would read back under a key that isn't its own.
    @discardableResult
    package func encodeRoot<T: Encodable>(_ object: T, identifier: String) throws -> ObjectKey {
        let storedClass = registry.storedClass(of: T.self)
        let key = ObjectKey(typeName: try storedClass?.name ?? Identity.typeName(T.self), identifier: identifier)
        if let declared = try TypeInfo.declaredIdentifier(of: object), declared != identifier {
            throw GarageError.invalidIdentifier(
                typeName: key.typeName, identifier: identifier,
                reason: "the object is Identifiable, with the id \(declared); park it with park(_:), under its id")
        }
        if identifier.containsNUL {
            throw GarageError.invalidIdentifier(
                typeName: key.typeName, identifier: identifier,
                reason: "it contains the character U+0000 (NUL), which the store would cut the identifier at")
        }
        visited.insert(key)
        try store(object, key: key, isRoot: true, tagged: storedClass != nil)
        try drainQueue()
        return key
    }

    /// Adds `json`, a JSON object already encoded, as the root row `key`, referencing nothing
    /// (a record of a type the process has no Swift type for: the sync server's).
    package func encodeRoot(json: String, key: ObjectKey) throws {
        for part in [key.typeName, key.identifier] where part.isEmpty || part.containsNUL {
            throw GarageError.invalidIdentifier(typeName: key.typeName, identifier: key.identifier,
                                                reason: "a type name and an identifier are not empty and hold no U+0000 (NUL)")
        }
        guard case .object? = try? JSONReader.parse(json) else {
            throw GarageError.corruptData(typeName: key.typeName, identifier: key.identifier, reason: "its JSON is not an object")
        }
        if let path = JSONWriter.pathOfNUL(in: Array(json.utf8)) {
            throw GarageError.corruptData(typeName: key.typeName, identifier: key.identifier,
                                          reason: "its JSON holds U+0000 (NUL) at \(JSONWriter.describe(path))")
        }
        visited.insert(key)
        add(EncodedRow(key: key, json: json, syncStatus: nil, revision: nil, references: [], isRoot: true))
    }

    /// The key of the row of the `Identifiable` `value` declared as `T`: a registered subclass's
    /// objects are rows of the class they descend from (``RegisteredTypes``); `tagged` then.
    package func key<T>(of value: any Identifiable, as type: T.Type) throws -> (key: ObjectKey, tagged: Bool) {
        let storedClass = registry.storedClass(of: T.self)
        return (ObjectKey(typeName: try storedClass?.name ?? Identity.typeName(T.self),
                          identifier: try Identity.identifier(of: value)), storedClass != nil)
    }

    /// The rows encoded since the last call, handed over: a large park writes them while it
    /// encodes the next ones. A row encoded again later is handed over again, and written
    /// after, so the last content still wins.
    package func takeRows() -> [EncodedRow] {
        defer {
            rows.removeAll(keepingCapacity: true)
            rowIndex.removeAll(keepingCapacity: true)
        }
        return rows
    }

    func noteOmitted() {
        omittedCount += 1
    }

    /// Encodes `object` alone as the row `key`: the objects it references stay stubs, and are
    /// not encoded. A rewrite of one stored row (``DeleteRule/nullify(in:)``).
    package func encodeAlone<T: Encodable>(_ object: T, as key: ObjectKey, isRoot: Bool) throws -> EncodedRow {
        visited.insert(key)
        defer { queue.removeAll() }
        let content: Content
        do {
            content = try encodeContent(object, canonical: false)
        } catch let error as EncodingError {
            throw error.locating(key.description)
        }
        return EncodedRow(key: key, json: String(decoding: content.json, as: UTF8.self), syncStatus: content.syncStatus,
                          revision: content.revision, references: content.references, isRoot: isRoot)
    }

    private func drainQueue() throws {
        var index = 0
        while index < queue.count {
            try queue[index]()
            index += 1
        }
        queue.removeAll()
    }

    /// The identifier `object` is parked under.
    package func identifier<T: Encodable>(of object: T) throws -> String {
        try Identity.checkIsObject(T.self, operation: "identify")
        if let identifier = try TypeInfo.declaredIdentifier(of: object) {
            return identifier
        }
        guard object is any Hashable else {
            throw GarageError.missingConformance(try Identity.typeName(T.self))
        }
        return contentIdentifier(try encodeContent(object, canonical: true).json)
    }

    /// Schedules a nested `Identifiable` value to be encoded as its own row, unless it
    /// already is one.
    package func reference<T: Encodable>(_ object: T, key: ObjectKey, tagged: Bool) {
        guard visited.insert(key).inserted else { return }
        queue.append { [unowned self] in try store(object, key: key, isRoot: false, tagged: tagged) }
    }

    /// Encodes `object` as the row `key`; `tagged`, with its type name (a registered subclass
    /// stored in its class's rows).
    private func store<T: Encodable>(_ object: T, key: ObjectKey, isRoot: Bool, tagged: Bool = false) throws {
        let content: Content
        do {
            content = try encodeContent(object, canonical: false, tagged: tagged)
        } catch let error as EncodingError {
            throw error.locating(key.description)
        }
        add(EncodedRow(key: key, json: String(decoding: content.json, as: UTF8.self), syncStatus: content.syncStatus,
                       revision: content.revision, references: content.references, isRoot: isRoot))
        noteInstance(object, key: key)
    }

    /// Remembers `object` when it is a ``Revisioned`` class instance, to set its revision
    /// after the park.
    private func noteInstance<T>(_ object: T, key: ObjectKey) {
        guard T.self is AnyClass, let revisioned = object as? any Revisioned else { return }
        revisionedInstances.append((key, revisioned))
    }

    /// Sets the revision of every ``Revisioned`` class instance encoded whose row has one in
    /// `revisions` (the rows the park wrote).
    package func setRevisions(_ revisions: [ObjectKey: Int64]) {
        for (key, object) in revisionedInstances {
            guard let revision = revisions[key] else { continue }
            var instance = object
            instance.revision = revision // a class: sets it on the instance
        }
    }

    private func add(_ row: EncodedRow) {
        if let index = rowIndex[row.key] {
            // Parked again in the same call (parkAll of an object also referenced, or twice):
            // the last content wins, and a root stays a root.
            let wasRoot = rows[index].isRoot
            rows[index] = row
            rows[index].isRoot = row.isRoot || wasRoot
        } else {
            rowIndex[row.key] = rows.count
            rows.append(row)
        }
    }

    /// The JSON of one row's object, its status when it is `Syncable`, and the keys of the
    /// rows it references.
    ///
    /// `canonical` JSON has its object members sorted by key: the form a content identifier
    /// is computed from. Other rows keep the order their `encode(to:)` gave, which is the same
    /// on every park of the same type, and cheaper.
    private func encodeContent<T: Encodable>(_ object: T, canonical: Bool, tagged: Bool = false) throws -> Content {
        let info = TypeInfo.of(T.self)
        // Through the type's conformances (no box, no dynamic cast), or, for a value declared
        // as a protocol or a superclass, by its dynamic type.
        let isDeclaredType = type(of: object) == T.self
        let syncStatus = info.syncable.map { $0.syncStatus(of: object) }
            ?? (isDeclaredType ? nil : (object as? any Syncable)?.syncStatus)
        let revision = info.revisioned.map { $0.revision(of: object) }
            ?? (isDeclaredType ? nil : (object as? any Revisioned)?.revision)
        func newRow() -> RowEncoding {
            RowEncoding(graph: self, storesSyncStatusInRow: syncStatus != nil, storesRevisionInRow: revision != nil)
        }
        var row = newRow()
        let json: [UInt8]
        if !canonical, !tagged, streams, let streamed = stream(object, as: row) {
            json = streamed
        } else {
            // Anew: a stream that gave up may have noted references. The tree also throws the
            // error the stream met.
            row = newRow()
            let slot = try row.box(object, at: .root, isRowObject: true, tagged: tagged)
            json = JSONWriter.bytes(from: slot, canonical: canonical)
        }
        if let path = JSONWriter.pathOfNUL(in: json) {
            throw EncodingError.invalidValue(object, EncodingError.Context(
                codingPath: path,
                debugDescription: "the string at \(JSONWriter.describe(path)) holds the character U+0000 (NUL), "
                    + "which no engine stores as it is (SQLite's text functions stop at it, PostgreSQL's text can't hold it): "
                    + "remove or replace the character, or store the value as Data"))
        }
        return Content(json: json, syncStatus: syncStatus, revision: revision, references: row.references)
    }

    /// One row's object, encoded.
    private struct Content {
        var json: [UInt8]
        var syncStatus: SyncStatus?
        var revision: Int64?
        var references: [ObjectKey]
    }
}

/// Collections whose encoding order is not their content: their entries are sorted.
package protocol UnorderedEncodable {
    /// How many encoded values make one entry: 1 for a set, 2 (key, value) for a dictionary.
    static var valuesPerEntry: Int { get }
}

extension Set: UnorderedEncodable {
    package static var valuesPerEntry: Int { 1 }
}

extension Dictionary: UnorderedEncodable {
    package static var valuesPerEntry: Int { 2 }
}

extension EncodingError {
    /// The same error, its description prefixed with the object being parked (`Type(identifier)`,
    /// or the type alone), so that a failure deep in a graph names the object to look at.
    package func locating(_ object: String) -> EncodingError {
        switch self {
        case let .invalidValue(value, context):
            return .invalidValue(value, Context(
                codingPath: context.codingPath, debugDescription: "\(object): \(context.debugDescription)",
                underlyingError: context.underlyingError))
        @unknown default:
            return self
        }
    }
}
