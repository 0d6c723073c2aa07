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
        if let identifier = try Identity.declaredIdentifier(of: object) {
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
        if let declared = try Identity.declaredIdentifier(of: object), declared != identifier {
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

    fileprivate func noteOmitted() {
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
        if let identifier = try Identity.declaredIdentifier(of: object) {
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
        let syncStatus = (object as? any Syncable)?.syncStatus
        let revision = (object as? any Revisioned)?.revision
        let row = RowEncoding(graph: self, storesSyncStatusInRow: syncStatus != nil, storesRevisionInRow: revision != nil)
        let slot = try row.box(object, at: .root, isRowObject: true, tagged: tagged)
        let json = JSONWriter.bytes(from: slot, canonical: canonical)
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

/// The encoding state of one row: the graph it belongs to, and the references it holds.
package final class RowEncoding {
    package unowned let graph: GraphEncoder
    /// The row's object is `Syncable`: its status lives in the row, not in its JSON.
    package let storesSyncStatusInRow: Bool
    /// The row's object is `Revisioned`: its revision lives in the row, not in its JSON.
    package let storesRevisionInRow: Bool
    package private(set) var references: [ObjectKey] = []
    private var referenceSet: Set<ObjectKey> = []

    package init(graph: GraphEncoder, storesSyncStatusInRow: Bool, storesRevisionInRow: Bool = false) {
        self.graph = graph
        self.storesSyncStatusInRow = storesSyncStatusInRow
        self.storesRevisionInRow = storesRevisionInRow
    }

    /// Encodes one value at `path`. A nested `Identifiable` becomes a reference stub, unless it
    /// is ``InlineIdentifiable``: that is encoded inline, as a value that is not identifiable.
    ///
    /// `tagged` writes the value with its type name even when it is of the type declared.
    package func box<T: Encodable>(_ value: T, at path: CodingPath, isRowObject: Bool = false, tagged: Bool = false) throws -> EncodedSlot {
        let info = TypeInfo.of(T.self)
        let kind = info.kind
        if case .primitive(let primitive) = kind {
            return .value(try primitive.jsonValue(of: value, codingPath: path))
        }
        if path.depth >= JSONReader.maximumDepth {
            throw EncodingError.invalidValue(value, .init(
                codingPath: path.keys,
                debugDescription: "The value is nested \(path.depth) levels deep; an object stores at most "
                    + "\(JSONReader.maximumDepth). Make some nested values Identifiable, so that they are parked "
                    + "as rows of their own."))
        }
        if path.depth & 7 == 0, ThreadStack.isShort {
            // A deeply nested value on a thread with a small stack (see `ThreadStack`).
            return try ThreadStack.run({ try box(value, at: path, isRowObject: isRowObject, tagged: tagged) }, context: graph.context)
        }
        switch kind {
        case .date:
            if let date = value as? Date { return try boxDate(date, at: path) }
        case .data:
            if let data = value as? Data { return .value(.string(data.base64EncodedString())) }
        case .url:
            if let url = value as? URL { return .value(.string(url.absoluteString)) }
        case .decimal:
            if let decimal = value as? Decimal {
                guard decimal.isFinite else {
                    throw EncodingError.invalidValue(decimal, .init(
                        codingPath: path.keys, debugDescription: "Unable to encode Decimal.nan in JSON."))
                }
                return .value(.number(decimal.description))
            }
        case .identifiable where !isRowObject:
            if let identifiable = value as? any Identifiable {
                let (key, tagged) = try graph.key(of: identifiable, as: T.self)
                graph.reference(value, key: key, tagged: tagged)
                if referenceSet.insert(key).inserted {
                    references.append(key)
                }
                return .value(.string(key.identifier))
            }
        default:
            break
        }
        if info.isClass, tagged || type(of: value) != T.self {
            let subclass: any Encodable.Type = type(of: value)
            return try boxSubclassInstance(subclass, value, declared: T.self, at: path, isRowObject: isRowObject)
        }
        let encoder = ReferenceEncoder(row: self, path: path)
        try value.encode(to: encoder)
        if case .unordered(let valuesPerEntry) = kind, case .array(let builder)? = encoder.slot {
            return .value(.array(Self.canonicalOrder(builder.elements.map(\.jsonValue), valuesPerEntry: valuesPerEntry)))
        }
        return encoder.slot ?? .value(.object([]))
    }

    /// An instance of a subclass where its class `declared` is declared: its type name, and its
    /// value encoded as its own type, so that it reads back as what it is.
    ///
    /// - throws: ``GarageError/unregisteredType(typeName:declaredType:)`` unless the garage
    ///   knows its type (``Garage/register(_:)``).
    @inline(never)
    private func boxSubclassInstance<U: Encodable>(_ subclass: U.Type, _ instance: Any, declared: Any.Type,
                                                   at path: CodingPath, isRowObject: Bool) throws -> EncodedSlot {
        // Opening an existential gives the type it was made from, not the instance's class.
        let value = instance as! U
        let name = try Identity.typeName(U.self)
        guard graph.registry.contains(ObjectIdentifier(U.self), named: name) else {
            throw GarageError.unregisteredType(typeName: Identity.fullName(U.self), declaredType: Identity.fullName(declared))
        }
        return try tagged(name, try box(value, at: path, isRowObject: isRowObject))
    }

    /// A value with its type name: `{"@type": name, "@value": value}`.
    package func tagged(_ name: String, _ value: EncodedSlot) throws -> EncodedSlot {
        let object = ObjectBuilder()
        object.set(.value(.string(name)), for: RegisteredTypes.typeKey)
        object.set(value, for: RegisteredTypes.valueKey)
        return .object(object)
    }

    /// The entries of a set (or of a dictionary encoded as `[key, value, ...]`), sorted by
    /// their JSON: their iteration order is seeded per process, and the stored JSON and a
    /// `Hashable` object's identifier must not depend on it.
    private static func canonicalOrder(_ values: [JSONValue], valuesPerEntry: Int) -> [JSONValue] {
        guard valuesPerEntry > 0, values.count % valuesPerEntry == 0 else { return values }
        let entries = stride(from: 0, to: values.count, by: valuesPerEntry).map {
            Array(values[$0..<$0 + valuesPerEntry])
        }
        return entries
            .map { (bytes: JSONWriter.bytes(from: .array($0)), values: $0) }
            .sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
            .flatMap(\.values)
    }

    /// Whether `value` is a reference the graph leaves out (see ``GraphEncoder/omits``).
    package func isOmitted<T: Encodable>(_ value: T) throws -> Bool {
        guard let omits = graph.omits, case .identifiable = ValueKind.of(T.self),
              let identifiable = value as? any Identifiable,
              omits(try graph.key(of: identifiable, as: T.self).key)
        else { return false }
        graph.noteOmitted()
        return true
    }

    private func boxDate(_ date: Date, at path: CodingPath) throws -> EncodedSlot {
        switch graph.dateStrategy {
        case .deferredToDate:
            return .value(try date.timeIntervalSinceReferenceDate.jsonValue(codingPath: path))
        case .secondsSince1970:
            return .value(try date.timeIntervalSince1970.jsonValue(codingPath: path))
        case .millisecondsSince1970:
            return .value(try (date.timeIntervalSince1970 * 1000).jsonValue(codingPath: path))
        case .iso8601:
            return .value(.string(ISO8601Text.string(from: date)))
        case .custom(let encode):
            let encoder = ReferenceEncoder(row: self, path: path)
            try encode(date, encoder)
            return encoder.slot ?? .value(.object([]))
        #if canImport(Darwin)
        default:
            // `.formatted` (on Linux, `.formatted` is a `.custom` closure) and future strategies.
            return .value(try DateCoding.encodeWithFoundation(date, strategy: graph.dateStrategy, codingPath: path.keys))
        #endif
        }
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
