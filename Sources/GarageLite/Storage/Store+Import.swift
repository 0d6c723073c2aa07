import Foundation
import GarageLiteCore

// Importing a GarageStorage store: its rows, checked and converted (dates, statuses,
// encryption, the references they may hold), written where the garage has no row yet.
extension Store {
    /// Writes the rows of `source` in one transaction, each only where there is no row (nor
    /// tombstone) of its key, and none that an earlier import of the same source took (see
    /// ``GarageStorageImportRecord``); records, in that transaction, every key it took.
    func importing(_ source: GarageStorageImport) -> StoreWork<GarageStorageImport.Outcome> {
        let rows = source.rows
        return StoreWork(operation: "import \(rows.count) objects from a GarageStorage store", access: .write { [self] statements in
            let outcome = try Store.transaction(statements) {
                let name = GarageStorageImportRecord.metadataName(source: source.sourceIdentity)
                let stored = try statements.metadata(name)
                var record = try stored.map { text in
                    do {
                        return try GarageStorageImportRecord(parsing: text)
                    } catch {
                        // Importing again without the record would bring back what was deleted since.
                        throw GarageError.damagedStore(
                            path: path ?? ":memory:", operation: "import a GarageStorage store",
                            reason: "the record of what was imported from this source (\(name)) can't be read: \(error); "
                                + "nothing was imported")
                    }
                } ?? GarageStorageImportRecord()
                var outcome = GarageStorageImport.Outcome()
                for (index, (key, row)) in rows.enumerated() {
                    if index % Store.cancellationBatch == 0 { try Store.checkNotCancelled() }
                    if record.keys.contains(key) {
                        outcome.importedBefore.insert(key)
                    } else if try statements.insertImported(key, row) {
                        outcome.written.insert(key)
                    }
                }
                // What the garage had already is taken too: deleted later, it must not come back either.
                let taken = rows.map(\.key).filter { !record.keys.contains($0) }
                if stored == nil || !taken.isEmpty {
                    record.keys.formUnion(taken)
                    try statements.setMetadata(name, record.text)
                }
                return outcome
            }
            if !outcome.written.isEmpty, listener.isListening {
                var changes = ChangeSet()
                for (key, row) in rows where outcome.written.contains(key) {
                    changes.record(.park(RowPayload(data: row.data, isEncrypted: row.isEncrypted, syncStatus: row.syncStatus,
                                                    references: row.references, isRoot: true)), for: key)
                }
                listener.committed(changes)
            }
            return outcome
        })
    }
}

/// What the store keeps of the imports of one GarageStorage store (a `garage_meta` fact, one
/// per source): the key, by GarageStorage's type name and identifier, of every object an
/// import took from it (imported, or left as the garage had it), so that importing the same
/// source again takes none of them again, whatever the garage did with them since (deleted,
/// renamed by `migrateAll`, changed).
///
/// Its text is JSON: `{"keys": {"Person": ["p1", "p2"], ...}}`, types and identifiers sorted.
struct GarageStorageImportRecord: Equatable {
    /// The keys taken from the source.
    var keys: Set<ObjectKey> = []

    /// The name of the record of the source `identity` (``GarageStorageImport/sourceIdentity``).
    static func metadataName(source identity: String) -> String {
        "garagestorage-import:" + identity
    }

    /// An empty record: nothing was taken from the source yet.
    init() {}

    /// The record `text` holds.
    ///
    /// - throws: A description of what is wrong, when it is not a record.
    init(parsing text: String) throws {
        guard case .object(let members) = try JSONReader.parse(text),
              case .object(let types)? = members.first(where: { $0.key == "keys" })?.value else {
            throw GarageError.storageFailure(operation: "read an import record", reason: "it has no object \"keys\"")
        }
        for type in types {
            guard case .array(let identifiers) = type.value else {
                throw GarageError.storageFailure(operation: "read an import record",
                                                 reason: "the identifiers of \(type.key) are not an array")
            }
            for identifier in identifiers {
                guard case .string(let identifier) = identifier else {
                    throw GarageError.storageFailure(operation: "read an import record",
                                                     reason: "an identifier of \(type.key) is not a string")
                }
                keys.insert(ObjectKey(typeName: type.key, identifier: identifier))
            }
        }
    }

    /// The record as text.
    var text: String {
        let types = Dictionary(grouping: keys, by: \.typeName)
        let members = types.keys.sorted().map { type in
            JSONMember(key: type, value: .array(types[type, default: []].map(\.identifier).sorted().map(JSONValue.string)))
        }
        return JSONWriter.string(from: .object([JSONMember(key: "keys", value: .object(members))]))
    }
}

/// The rows of a GarageStorage store, ready to import, and those that are not.
struct GarageStorageImport {
    private(set) var rows: [(key: ObjectKey, row: ImportedRow)] = []
    private(set) var failures: [ImportFailure] = []
    /// What identifies the source from one import to the next: `coredata:` and its Core Data
    /// store UUID, which Core Data gives a store when it creates it and keeps whatever path the
    /// file has (an iOS app's container moves with each update of the app); for a file without
    /// one (not made by Core Data), `path:` and the SHA-256 of its path, symbolic links resolved.
    let sourceIdentity: String

    /// What an import wrote.
    struct Outcome: Sendable {
        /// The keys written: the garage had no row of them.
        var written: Set<ObjectKey> = []
        /// The keys an earlier import of the same source took, not imported again.
        var importedBefore: Set<ObjectKey> = []
    }

    /// The identity of the source at `path` whose Core Data UUID is `storeUUID` (see ``sourceIdentity``).
    static func sourceIdentity(path: String, storeUUID: String?) -> String {
        if let storeUUID { return "coredata:" + storeUUID.uppercased() }
        let resolved = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        return "path:" + Identity.contentIdentifier(ofJSON: Array(resolved.utf8))
    }

    /// - parameter storeUUID: The source's Core Data store UUID, when it has one.
    /// - parameter decrypt: The garage's delegate's, to check (and read the references of)
    ///   the rows that are not JSON; without it, they are imported as encrypted, unchecked.
    init(_ source: [GarageStorageRow], path: String, storeUUID: String?, decrypt: ((String) throws -> Data)?, now: Date) {
        sourceIdentity = Self.sourceIdentity(path: path, storeUUID: storeUUID)
        // 1. Each row on its own.
        var valid: [(source: GarageStorageRow, key: ObjectKey, data: String, status: SyncStatus)] = []
        for row in source {
            let key = row.type.flatMap { type in row.identifier.map { ObjectKey(typeName: type, identifier: $0) } }
            func fail(_ reason: String) { failures.append(ImportFailure(rowID: row.primaryKey, key: key, reason: reason)) }
            if !row.problems.isEmpty { fail("its column \(row.problems.joined(separator: ", "))"); continue }
            guard row.type?.isEmpty == false else { fail("it has no type (ZGS_TYPE)"); continue }
            guard let key else { fail("it has no identifier (ZGS_IDENTIFIER)"); continue }
            guard !key.identifier.containsNUL, !key.typeName.containsNUL else {
                fail("its type or identifier contains U+0000 (NUL), which the store would cut short"); continue
            }
            guard let data = row.data, !data.isEmpty else {
                fail("its data (ZGS_DATA) is nil: GarageStorage read it as storageDataIsNil, and there is nothing to import")
                continue
            }
            guard let status = SyncStatus(rawValue: Int(row.syncStatus ?? 0)) else {
                fail("its sync status (ZGS_SYNCSTATUS) \(row.syncStatus ?? 0) is not one of 0 to 3"); continue
            }
            valid.append((row, key, data, status))
        }
        // 2. One row per object: the last modified (Core Data kept no two, but a file may).
        var chosen: [ObjectKey: Int] = [:]
        for (index, entry) in valid.enumerated() {
            guard let other = chosen[entry.key] else { chosen[entry.key] = index; continue }
            let older = valid[other].source, newer = entry.source
            let keepNew = (newer.modificationDate ?? 0, newer.primaryKey) > (older.modificationDate ?? 0, older.primaryKey)
            let dropped = keepNew ? older : newer
            failures.append(ImportFailure(
                rowID: dropped.primaryKey, key: entry.key,
                reason: "row \(keepNew ? newer.primaryKey : older.primaryKey) holds a later version of the same object"))
            if keepNew { chosen[entry.key] = index }
        }
        let kept = valid.indices.filter { chosen[valid[$0].key] == $0 }.map { valid[$0] }
        // 3. The JSON of each (decrypted when it is not JSON), for its references.
        var identifiers: [String: [String]] = [:]
        for entry in kept { identifiers[entry.key.identifier, default: []].append(entry.key.typeName) }
        let references = ReferenceCandidates(identifiers: identifiers, decrypt: decrypt)
        for entry in kept {
            var json = try? JSONReader.parse(entry.data)
            let isEncrypted = json == nil
            if isEncrypted, let decrypt {
                do {
                    json = try JSONReader.parse(try decrypt(entry.data))
                } catch {
                    failures.append(ImportFailure(
                        rowID: entry.source.primaryKey, key: entry.key,
                        reason: "its data is not JSON, and the dataEncryptionDelegate can't decrypt it: \(error)"))
                    continue
                }
            }
            let created = entry.source.creationDate ?? entry.source.modificationDate
            let modified = entry.source.modificationDate ?? entry.source.creationDate
            rows.append((entry.key, ImportedRow(
                data: entry.data, isEncrypted: isEncrypted,
                // GarageStorage had no claims: an upload it never finished is to be done again.
                syncStatus: entry.status == .syncing ? .notSynced : entry.status,
                creationDate: created.map(Date.init(timeIntervalSinceReferenceDate:)) ?? now,
                modificationDate: modified.map(Date.init(timeIntervalSinceReferenceDate:)) ?? now,
                references: ReferenceList.encode(json.map { references.keys(in: $0, of: entry.key) } ?? []),
                // Any status but undetermined: it may have reached the server (as format 2's migration).
                isRemote: entry.status != .undetermined)))
        }
        failures.sort { $0.rowID < $1.rowID }
    }
}

/// The objects an imported row may reference. Without the Swift types, a Swift row's
/// reference is a string like any other: every object of the imported store whose identifier
/// one of its strings is counts (an Objective-C reference names its type too). Too many rather
/// than too few: a delete rule then refuses or rewrites where it need not, never leaves a
/// reference dangling; parking the object again makes its references exact.
private struct ReferenceCandidates {
    let identifiers: [String: [String]]
    let decrypt: ((String) throws -> Data)?

    func keys(in json: JSONValue, of owner: ObjectKey) -> [ObjectKey] {
        var keys: [ObjectKey] = []
        var seen: Set<ObjectKey> = [owner]
        func add(_ key: ObjectKey) {
            if seen.insert(key).inserted { keys.append(key) }
        }
        func walk(_ value: JSONValue, depth: Int) {
            guard depth < JSONReader.maximumDepth else { return }
            switch value {
            case .string(let string):
                for type in identifiers[string] ?? [] { add(ObjectKey(typeName: type, identifier: string)) }
            case .array(let elements):
                for element in elements { walk(element, depth: depth + 1) }
            case .object(let members):
                if let text = GarageStorageShape.anonymousObjectText(value) {
                    let nested = (try? JSONReader.parse(text))
                        ?? decrypt.flatMap { decrypt in try? JSONReader.parse(try decrypt(text)) }
                    if let nested { walk(nested, depth: depth + 1) }
                } else if let identifier = GarageStorageShape.referenceIdentifier(value) {
                    walk(.string(identifier), depth: depth + 1)
                } else {
                    for member in members { walk(member.value, depth: depth + 1) }
                }
            default:
                break
            }
        }
        walk(json, depth: 0)
        return keys
    }
}
