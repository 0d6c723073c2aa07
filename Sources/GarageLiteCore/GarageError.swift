import Foundation

/// Every error the garage throws, apart from `DecodingError` and `EncodingError`
/// raised while converting objects to and from JSON.
///
/// Each case carries what you need to find the problem: the type name and identifier
/// of the object, or the path of the store. Its `description` says what went wrong and
/// what to do about it.
///
/// The first four cases and their descriptions are GarageStorage's, unchanged; bridged to
/// `NSError`, every case is in GarageStorage's domain, `"GarageStorage"` (``errorDomain``),
/// with its description under `NSLocalizedDescriptionKey`, so that code written for
/// GarageStorage that checks them keeps working.
///
/// ```swift
/// do {
///     try garage.delete(person)
/// } catch GarageError.failedToRetrieveObject(let type, let identifier) {
///     // nothing of that type and identifier is parked
/// }
/// ```
public enum GarageError: Error, Equatable, Sendable {
    /// No object of this type name (first value) and identifier (second value) is parked.
    case failedToRetrieveObject(String, String)

    /// The stored row of an object has no data: the object is lost, and only its row's key
    /// remains (a store imported from GarageStorage can hold such rows). Delete it, or park it
    /// again. GarageStorage's case; where GarageStorage gave the type name, GarageLite names
    /// the object: `Type(identifier)`.
    case storageDataIsNil(String)

    /// A top-level object is neither `Identifiable` nor `Hashable` (the type name).
    case missingConformance(String)

    /// An `Identifiable` object's `ID` type (the type name) is not `String`, `UUID`
    /// or `LosslessStringConvertible`.
    case unsupportedIDConformance(String)

    /// The store at `path` could not be opened or created.
    case cannotOpenStore(path: String, reason: String)

    /// The file (or PostgreSQL schema) at `path` is not a GarageLite store. It was left untouched.
    case notAGarageStore(path: String, reason: String)

    /// The store at `path` was written by a newer version of GarageLite, with a file
    /// format this version does not know. It was left untouched.
    case newerFormatVersion(path: String, version: Int, supportedVersion: Int)

    /// The row was stored encrypted, and the garage has no ``DataEncryptionDelegate``.
    case missingEncryptionDelegate(typeName: String, identifier: String)

    /// The row's data is not valid JSON (or not valid UTF-8 after decryption).
    case corruptData(typeName: String, identifier: String, reason: String)

    /// Retrieving an object came back to an object that is still being decoded. `cycle`
    /// lists the objects involved, as `Type(identifier)`, from the first to the repeated one.
    case referenceCycle(typeName: String, identifier: String, cycle: [String])

    /// Another connection held the store's write lock for longer than the busy timeout,
    /// so `operation` gave up.
    case storeBusy(operation: String, path: String)

    /// `operation` was called from code the garage runs while it reads or writes the store:
    /// an `init(from:)`, an `encode(to:)`, the encryption delegate or a custom date strategy.
    case reentrantCall(operation: String)

    /// The storage failed while the garage performed `operation`: SQLite, or the PostgreSQL
    /// server (its `reason` then begins with "PostgreSQL"). Nothing of that operation was written.
    /// A PostgreSQL store's lost connection is ``connectionLost(path:operation:mayHaveCommitted:reason:)``.
    case storageFailure(operation: String, reason: String)

    /// The store at `path` can only be read: the file, or its folder (where SQLite keeps the
    /// store's `-wal` and `-shm` files), can't be written, or the garage was opened with
    /// ``Garage/readOnly(path:encryptionKey:)``. `operation` was refused, and nothing was written.
    case readOnlyStore(path: String, operation: String, reason: String)

    /// The disk holding the store at `path` is full (or the store reached its maximum size),
    /// so `operation` failed. Nothing of that operation was written.
    case storeFull(path: String, operation: String)

    /// SQLite found the store file at `path` damaged (truncated, or overwritten in part) while
    /// the garage performed `operation`. Nothing of that operation was written.
    case damagedStore(path: String, operation: String, reason: String)

    /// The ``DataEncryptionDelegate`` failed to decrypt the row of type `typeName` and
    /// `identifier`: typically a delegate with another key than the one that encrypted it.
    /// `reason` describes the delegate's error.
    case decryptionFailed(typeName: String, identifier: String, reason: String)

    /// An object of type `typeName` can't be parked under `identifier`, for `reason`.
    case invalidIdentifier(typeName: String, identifier: String, reason: String)
    /// The encryption delegate's output for an object can't be stored as it is (it contains
    /// U+0000); nothing was parked.
    case encryptionFailed(typeName: String, identifier: String, reason: String)
    /// A collection (`typeName`, such as `Array<Note>`) was given where one object belongs:
    /// `park(notes)` meant `parkAll(notes)`. Nothing was done.
    case collectionNotAnObject(typeName: String, operation: String)

    /// Two Swift types of this process would be stored under one type name, `typeName`:
    /// `existingType` used it first, so `type` was refused. Both are named in full, with their
    /// module (`String(reflecting:)`). Nothing was read or written.
    ///
    /// ```swift
    /// try garage.park(Billing.Item(id: "1"))      // stored as "Item"
    /// try garage.retrieve(Cart.Item.self, identifier: "1")
    /// // throws typeNameCollision(typeName: "Item", type: "Shop.Cart.Item",
    /// //                          existingType: "Shop.Billing.Item")
    /// ```
    ///
    /// Declare a name of its own on one of them with ``StoredTypeNamed``, then move the objects
    /// it stored under the old name with ``Garage/migrateAll(fromOldClassName:to:)-73yt5``.
    case typeNameCollision(typeName: String, type: String, existingType: String)
    /// A ``Revisioned`` object was parked (itself, or as an object another references) over a
    /// row whose revision is not the one it was retrieved at: it is stale, and parking it would
    /// undo the newer version. `parkedRevision` is the object's (0: not retrieved from this
    /// store), `storedRevision` the row's (0: no row, it was deleted). Nothing of the park was
    /// written.
    ///
    /// The same when a stale ``Revisioned`` copy is deleted, and when a change held unsaved
    /// (autosave off) or in a transaction is written (``Garage/save()-9hqro``,
    /// ``Garage/commitTransaction()-15z92``, the end of ``Garage/transaction(_:)-4nq2j``) after
    /// another garage or process changed its row: every change is checked again in the
    /// transaction that writes, and nothing of the save is written. The changes stay unsaved:
    /// ``Garage/discardUnsavedChanges(of:identifier:)`` forgets the stale one.
    ///
    /// ```swift
    /// do {
    ///     try garage.park(notebook)
    /// } catch GarageError.staleObject(let type, let identifier, _, _) {
    ///     // retrieve type/identifier again, apply the change to it, park it again
    /// }
    /// ```
    case staleObject(typeName: String, identifier: String, parkedRevision: Int64, storedRevision: Int64)
    /// `migrateAll(fromOldClassName: oldName, to: type)` was refused: `oldName` is the short
    /// name `type` left for a declared one (``StoredTypeNamed``), and in this process
    /// `otherType` is stored under it, so the objects stored under it may be its, and moving
    /// them all to `type` would take them from it. Nothing was moved.
    case ambiguousMigration(oldName: String, type: String, otherType: String)
    /// The object of type `typeName` with identifier `identifier` was not deleted: the objects
    /// `referrers` name reference it, and the delete's rule is ``DeleteRule/deny`` (the
    /// default of ``Garage/deleteRule``). Nothing was deleted.
    ///
    /// ```swift
    /// do {
    ///     try garage.delete(note)
    /// } catch GarageError.deleteDenied(_, _, let referrers) {
    ///     // remove the note from its notebooks first, or:
    ///     try garage.delete(note, rule: .nullify(in: Notebook.self))
    /// }
    /// ```
    case deleteDenied(typeName: String, identifier: String, referrers: [ObjectKey])
    /// Deleting the object of type `typeName` with identifier `identifier` with
    /// ``DeleteRule/nullify(in:)`` could not remove its reference from `referrer`, for
    /// `reason`: the referrer's type was not among the rule's types, or it can't do without
    /// the object (a property that is not optional holds it). Nothing was deleted or changed.
    case cannotNullify(typeName: String, identifier: String, referrer: ObjectKey, reason: String)
    /// `retrieve` found nothing of type `typeName`, which is identified by a hash of its content
    /// (it is `Hashable`, not `Identifiable`), under `identifier`, an integer: most likely a
    /// `hashValue`, as GarageStorage apps used. GarageLite's identifier of a
    /// `Hashable` object is the SHA-256 of its content, the same in every process: get it
    /// with ``Garage/identifier(for:)``.
    ///
    /// ```swift
    /// let tag = try garage.retrieve(Tag.self, identifier: garage.identifier(for: Tag(name: "red")))
    /// ```
    case contentIdentifierExpected(typeName: String, identifier: String)
    /// The file at `path` is not a GarageStorage store, for `reason`: ``Garage/importGarageStorageStore(at:)-1ia5l``
    /// imported nothing, and left it untouched.
    case notAGarageStorageStore(path: String, reason: String)
    /// `operation` on an explicit transaction was refused, for `reason`: a commit or roll back
    /// without ``Garage/beginTransaction()``, or a second begin. Nothing changed.
    case transactionMisuse(operation: String, reason: String)
    /// An object of type `typeName` (`String(reflecting:)`) was parked where a
    /// `declaredType` is declared, and the garage doesn't know the type: read back, it would
    /// be a `declaredType`, without what its type adds. Register it with
    /// ``Garage/register(_:)`` before parking. Nothing was written.
    ///
    /// ```swift
    /// try garage.register(Student.self, Teacher.self)
    /// ```
    case unregisteredType(typeName: String, declaredType: String)
    /// ``Garage/register(_:)`` refused the type `typeName`, for `reason`; nothing was registered.
    case cannotRegister(typeName: String, reason: String)
    /// `operation` was asked of `typeName`, a registered subclass whose objects are rows of
    /// `className`, the `Identifiable` class it descends from: they are counted and listed with
    /// that class. Call it with `className` and cast (`as? Student`).
    ///
    /// ```swift
    /// let students = try garage.retrieveAll(Person.self).compactMap { $0 as? Student }
    /// ```
    case storedAsItsClass(typeName: String, className: String, operation: String)
    /// An encryption key can't be used, for `reason` (an ``AESGCMEncryptor`` takes 256-bit keys).
    case invalidEncryptionKey(reason: String)
    /// The object of type `typeName` with identifier `identifier` is stored unencrypted, in a
    /// garage whose delegate binds each ciphertext to its row (``RowBoundEncryptionDelegate``):
    /// a plaintext row can be written into the file by anyone, so it is not read. Encrypt the
    /// objects parked before the delegate was set with
    /// ``Garage/encryptUnencryptedObjects()-6b6nq``, or delete the object.
    case unencryptedRow(typeName: String, identifier: String)
    /// The store at `path` is encrypted (it holds a key record) and was opened, or written,
    /// without its key: open it with its `encryptionKey:`. Nothing was read or written.
    case encryptionKeyRequired(path: String)
    /// The key given for the store at `path` is not the one it is locked with: it does not
    /// unwrap the store's data key (whose authentication tag is the key check value). Nothing
    /// was read or written.
    case wrongEncryptionKey(path: String, reason: String)
    /// The store's current key encrypted `encryptions` objects, its limit: more random-looking
    /// 96-bit nonces under one AES-GCM key would make a collision too likely. Nothing was
    /// written; rotate the key with ``Garage/rekey(to:)-7738p``.
    case encryptionLimitReached(path: String, encryptions: Int64)
    /// This garage's key for the store at `path` is out of date: another garage or process
    /// rotated the store's data key, decrypted the store, or locked it, after this garage
    /// opened it (`reason` says which). Nothing was read or written, and the store's objects
    /// are intact: open the store again (with its key, if it is encrypted).
    case staleEncryptionKey(path: String, reason: String)
    /// `operation` (``Garage/rekey(to:)-7738p`` or ``Garage/decryptAllObjects()-7ed1d``) stopped
    /// part-way on the store at `path`, for `reason` (a full disk, an I/O error): unlike the
    /// storage errors it stands for, what it had done stays written (the store's key may have
    /// changed already), every object is intact, and the store now opens with `opensWith`. Call
    /// `operation` again (with the same key) to finish it.
    case keyChangeUnfinished(path: String, operation: String, opensWith: String, reason: String)
    /// A query of `typeName` can't be answered as written (`query`): `reason` says which part
    /// and why (a property the objects' JSON can't hold, a comparison with a value of another
    /// kind than the property's, content a garage that encrypts can't query). Nothing was read.
    case invalidQuery(typeName: String, query: String, reason: String)
    /// The connection to the PostgreSQL server of the store at `path` was lost, or could not be
    /// made, while the garage performed `operation` (`reason` says how). `mayHaveCommitted` says
    /// what is known of its writes: `false`, nothing of it was written (a read, or a write that
    /// had not sent its commit), and calling it again is safe; `true`, its commit (or a statement
    /// that commits alone, as a claim's) was sent and no answer came: it may have committed, so
    /// read what it wrote again before calling it again. The next call connects again.
    ///
    /// ```swift
    /// do {
    ///     try garage.park(note)
    /// } catch GarageError.connectionLost(_, _, mayHaveCommitted: true, _) {
    ///     // retrieve the note: it may be parked already
    /// }
    /// ```
    case connectionLost(path: String, operation: String, mayHaveCommitted: Bool, reason: String)

    /// Another connection or process changed the layout of the store at `path` (an index, a text
    /// index, their statistics) while `operation` was being prepared, and SQLite could not
    /// prepare it again on the new layout. Nothing of `operation` was written; calling it again
    /// reads the new layout.
    case storeLayoutChanged(path: String, operation: String)
}

extension GarageError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case let .failedToRetrieveObject(type, identifier):
            return "Failed to retrieve object of type: \(type) with identifier: \(identifier)"
        case let .storageDataIsNil(type):
            return "CoreDataObject.gsData is nil for type: \(type)"
        case let .missingConformance(type):
            return "Missing Identifiable or Hashable conformance for type: \(type)"
        case let .unsupportedIDConformance(idType):
            return "Identifiable ID type '\(idType)' must be String, UUID, or LosslessStringConvertible"
        case let .cannotOpenStore(path, reason) where path.hasPrefix("postgres://"):
            return "Cannot open the garage store at \(path): \(reason). Check the URL (its schema, database and user), "
                + "that the server runs and accepts this user's connections, and that the user may create the schema."
        case let .cannotOpenStore(path, reason):
            return "Cannot open the garage store at \(path): \(reason). Check that the folder exists "
                + "and that this process may read and write there."
        case let .notAGarageStore(path, reason):
            let isSchema = path.hasPrefix("postgres://")
            return "The \(isSchema ? "schema" : "file") at \(path) is not a GarageLite store (\(reason)); it was left "
                + "untouched. " + (isSchema ? "Use another schema, or drop this one" : "Open another path, or move the file away")
                + " if it is not needed."
        case let .newerFormatVersion(path, version, supported):
            return "The garage store at \(path) has format version \(version), but this version of "
                + "GarageLite reads versions up to \(supported); the file was left untouched. "
                + "Update GarageLite to open it."
        case let .missingEncryptionDelegate(type, identifier):
            return "The object of type \(type) with identifier \(identifier) is stored encrypted, "
                + "but the garage has no dataEncryptionDelegate. Set the delegate that encrypted it (or, if another garage "
                + "or process locked the store with a key after this garage opened it, open it again with that key)."
        case let .corruptData(type, identifier, reason):
            return "The stored data of the object of type \(type) with identifier \(identifier) "
                + "is corrupt: \(reason). Park the object again, or delete it."
        case let .referenceCycle(type, identifier, cycle):
            return "Retrieving the object of type \(type) with identifier \(identifier) needs itself: "
                + "the references \(cycle.joined(separator: " -> ")) form a cycle that Decodable "
                + "cannot rebuild, even through optional references. Break the cycle before parking (set one of "
                + "these references to nil, or keep the other object's identifier instead of the object), and "
                + "restore it after retrieving."
        case let .storeBusy(operation, path):
            return "The garage store at \(path) is busy: another connection kept it locked for longer "
                + "than the busy timeout, so \(operation) gave up. Try again, or shorten the other "
                + "connection's transactions."
        case let .reentrantCall(operation):
            return "\(operation) was called while the garage was reading or writing the store (from an "
                + "init(from:), encode(to:), encryption delegate or date strategy). Call the garage "
                + "after that operation returns."
        case let .storageFailure(operation, reason):
            let check = reason.hasPrefix("PostgreSQL") ? "the server's log" : "the store's file and folder and the free space"
            return "The garage store failed to \(operation): \(reason). Nothing of that operation was written; check "
                + "\(check), then try again."
        case let .connectionLost(path, operation, mayHaveCommitted, reason):
            let known = mayHaveCommitted
                ? "Its commit was sent and no answer came, so it may have committed: read the objects it wrote again "
                    + "before calling it again (it may be done already)."
                : "Nothing of it was written (no commit of it was sent), so calling it again is safe."
            return "The connection to the PostgreSQL server of the garage store at \(path) failed, so \(operation) "
                + "failed: \(reason). \(known) The next call connects again; if it fails too, check that the server "
                + "runs and is not restarting, that it accepts more connections (max_connections), and the network."
        case let .readOnlyStore(path, operation, reason):
            return "The garage store at \(path) is read-only (\(reason)), so \(operation) was refused; "
                + "nothing was written, and reading still works. To write, make the file and its folder "
                + "writable (SQLite keeps the -wal and -shm files next to the store), or copy the store "
                + "to a writable folder and open the copy."
        case let .storeFull(path, operation):
            return "The disk holding the garage store at \(path) is full, so \(operation) failed; nothing "
                + "of it was written, and what was parked before is intact. Free some disk space, then "
                + "try again."
        case let .damagedStore(path, operation, reason):
            return "The garage store at \(path) is damaged (\(reason)), so \(operation) failed, and wrote "
                + "nothing. Restore the file from a backup, or copy the objects that can still be retrieved "
                + "into a new store."
        case let .decryptionFailed(type, identifier, reason):
            return "The object of type \(type) with identifier \(identifier) could not be decrypted: "
                + "\(reason). Set the dataEncryptionDelegate (and key) that encrypted it; if that key is "
                + "lost, delete the object or park it again."
        case let .invalidIdentifier(type, identifier, reason):
            return "An object of type \(type) can't be parked with the identifier \(identifier.debugDescription): "
                + "\(reason). Give it an identifier without that character."
        case let .encryptionFailed(type, identifier, reason):
            return "The object of type \(type) with identifier \(identifier) could not be encrypted: \(reason). "
                + "Nothing was parked; fix the dataEncryptionDelegate, then park it again."
        case let .collectionNotAnObject(type, operation):
            let instead = operation == "park" ? "parkAll(_:)" : "\(operation) for each element"
            return "Cannot \(operation) \(type) as one object: it is a collection. Use \(instead) to "
                + "\(operation) its elements, or wrap it in a struct with an identity to keep it as one object."
        case let .typeNameCollision(name, type, existing):
            let suggested = Self.swiftName(type)
            return "The types \(type) and \(existing) would both be stored under the type name \"\(name)\", "
                + "and each would read the other's objects, so \(type) was refused: \(existing) used the "
                + "name first in this process. Give one of them a name of its own, for example "
                + "`extension \(suggested): StoredTypeNamed { static let storedTypeName = \"\(suggested)\" }`, "
                + "then move the objects it already stored as \"\(name)\" with "
                + "`garage.migrateAll(fromOldClassName: \"\(name)\", to: \(suggested).self)`."
        case let .ambiguousMigration(oldName, type, other):
            return "Cannot move the objects stored as \"\(oldName)\" to \(type): in this process \(other) is stored "
                + "under \"\(oldName)\" too, so some of them may be its, and they would move with the others. Nothing "
                + "was moved. Run the migration before \(other) is used (first thing after opening the garage), when "
                + "only \(type)'s objects were stored under that name; otherwise give \(other) a name of its own "
                + "as well (StoredTypeNamed), and sort its objects out before migrating."
        case let .staleObject(type, identifier, parked, stored):
            let had = parked == 0 ? "was not retrieved from this store (revision 0)"
                : parked < 0 ? "holds the provisional revision of a change that was never saved (discarded, rolled "
                    + "back, or replaced by a later park)" : "has revision \(parked)"
            let unsaved = "If the change was unsaved (autosave off) or in a transaction, call "
                + "discardUnsavedChanges(of:identifier:) first, and save() again after parking."
            if stored == 0 {
                return "The object of type \(type) with identifier \(identifier) is stale: it \(had), and was deleted "
                    + "since, so writing it would bring it back. Nothing was written. If it was parked as another "
                    + "object's child, retrieve the parent again (or remove the object from your copy of it) and park "
                    + "that; to bring the object back, park a copy of it with revision 0. " + unsaved
            }
            let found = stored < 0 ? "has a newer unsaved change in this garage" : "is stored at revision \(stored)"
            return "The object of type \(type) with identifier \(identifier) is stale: it \(had), and \(found), "
                + "so writing it would undo a newer version. Nothing was written. Retrieve it again, "
                + "apply your change to it, and park it again (a struct with park(&value), so that it learns its new "
                + "revision). " + unsaved + " If it was parked as another object's child, parking the parent with "
                + "children: .keepStored writes the rest and names it in the ParkReport's keptChildren: apply your "
                + "change to the stored version of each and park it, then retrieve the parent again before parking it again."
        case let .deleteDenied(type, identifier, referrers):
            let names = referrers.prefix(5).map(\.description).joined(separator: ", ")
                + (referrers.count > 5 ? " and \(referrers.count - 5) more" : "")
            let types = Set(referrers.map(\.typeName)).sorted().map { "\($0).self" }.joined(separator: ", ")
            return "Cannot delete \(type)(\(identifier)): \(names) \(referrers.count == 1 ? "references" : "reference") it, "
                + "and would no longer read. Nothing was deleted. Remove it from \(referrers.count == 1 ? "that object" : "them") "
                + "and park \(referrers.count == 1 ? "it" : "them") first, or delete with rule: .nullify(in: \(types)) to "
                + "remove the references in the same transaction, where optional properties, arrays or dictionaries hold "
                + "them (or rule: .rowOnly to leave them dangling, as GarageStorage did)."
        case let .cannotNullify(type, identifier, referrer, reason):
            let reason = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
            return "Cannot delete \(type)(\(identifier)) with rule .nullify: \(referrer) references it, and \(reason). "
                + "Nothing was deleted or changed."
        case let .notAGarageStorageStore(path, reason):
            return "The file at \(path) is not a GarageStorage store (\(reason)); nothing was imported, and the file "
                + "was left untouched. Pass the store file GarageStorage kept (Documents/<name>.sqlite, with its -wal "
                + "file beside it)."
        case let .transactionMisuse(operation, reason):
            return "Cannot \(operation): \(reason)."
        case let .unregisteredType(type, declared):
            return "A \(type) was parked where a \(declared) is declared, and this garage doesn't know \(type): it could "
                + "not be read back as a \(type). Register it before parking: "
                + "garage.register(\(type.split(separator: ".").last.map(String.init) ?? type).self). Nothing was written."
        case let .invalidEncryptionKey(reason):
            return "The encryption key can't be used: \(reason)."
        case let .unencryptedRow(type, identifier):
            return "\(type)(\(identifier)) is stored unencrypted, and this garage encrypts every object for its row, so "
                + "it was not read: anyone who can write the file could have put it there. If another garage or process "
                + "decrypted the store after this garage opened it, open the store again; if it was parked before "
                + "encryption was turned on, encrypt it with garage.encryptUnencryptedObjects(); otherwise delete it."
        case let .encryptionKeyRequired(path):
            return "The store at \(path) is encrypted, and this garage has no key for it: nothing was read or written. "
                + "Open it with its key: the garage's encryptionKey: .passphrase(_:) or .key(_:)."
        case let .wrongEncryptionKey(path, reason):
            return "The key given for the store at \(path) is not its key (\(reason)): nothing was read or written. "
                + "Open it with the passphrase or key it was locked with; without it, its objects can't be read."
        case let .staleEncryptionKey(path, reason):
            return "This garage's key for the store at \(path) is out of date: \(reason). Nothing was read or written, "
                + "and the store's objects are intact: open the store again (with its key, if it is encrypted)."
        case let .keyChangeUnfinished(path, operation, opensWith, reason):
            return "\(operation) stopped part-way on the store at \(path): \(reason). What it had done stays written (it is not "
                + "undone), and every object is intact: the store now opens with \(opensWith). Call \(operation) again "
                + "(with the same key) to finish it."
        case let .invalidQuery(type, query, reason):
            return "The query of \(type) \(query) can't be answered: \(reason). Nothing was read; change the query."
        case let .storeLayoutChanged(path, operation):
            return "Another connection changed the layout of the garage store at \(path) (its indexes) while \(operation) "
                + "was being prepared, so it was not run: nothing of it was written, and the store is intact. Try again."
        case let .encryptionLimitReached(path, encryptions):
            return "The key of the store at \(path) has encrypted \(encryptions) objects, as many as one AES-GCM key may "
                + "with random-looking nonces: nothing was written. Rotate the key with garage.rekey(to:), then park again."
        case let .cannotRegister(type, reason):
            return "Cannot register \(type): \(reason). Nothing was registered."
        case let .storedAsItsClass(type, className, operation):
            return "Cannot \(operation) \(type): its objects are rows of \(className), the Identifiable class it descends "
                + "from, counted and listed with the other \(className) objects. Call it with \(className).self, and cast "
                + "(as? \(type))."
        case let .contentIdentifierExpected(type, identifier):
            return "No \(type) is parked under the identifier \(identifier), and none can be: \(type) is identified by a "
                + "hash of its content (it is Hashable, not Identifiable), which GarageLite computes as the SHA-256 of its "
                + "JSON (64 hex digits, the same in every process), not as its hashValue. Get the identifier with "
                + "garage.identifier(for: object), or make \(type) Identifiable."
        }
    }

    public var errorDescription: String? { description }

    public var recoverySuggestion: String? {
        switch self {
        case .failedToRetrieveObject:
            return "Park the object first, or check its type and identifier."
        case .missingConformance:
            return "Make the type Identifiable (with a String, UUID or LosslessStringConvertible ID) or Hashable."
        case .unsupportedIDConformance:
            return "Use a String, UUID, Int or other LosslessStringConvertible ID."
        case .storageDataIsNil:
            return "Delete the object, or park it again."
        default:
            return nil
        }
    }
}

extension GarageError {
    /// A type's full name (`String(reflecting:)`) as its code may spell it: without its
    /// module, and without the unnamed contexts of a local type. `Shop.Box<Shop.Cart.Item>`
    /// is `Box<Cart.Item>`.
    fileprivate static func swiftName(_ fullName: String) -> String {
        var name = fullName
        while let start = name.range(of: "(unknown context at "),
              let end = name.range(of: ").", range: start.upperBound..<name.endIndex) {
            name.removeSubrange(start.lowerBound..<end.upperBound)
        }
        func isNamePart(_ character: Character) -> Bool {
            character.isLetter || character.isNumber || character == "_"
        }
        guard let dot = name.firstIndex(of: "."), name[..<dot].allSatisfy(isNamePart) else { return name }
        let module = name[...dot]
        var result = ""
        var rest = Substring(name)
        var atNameStart = true
        while let character = rest.first {
            if atNameStart, rest.hasPrefix(module) {
                rest = rest.dropFirst(module.count)
                atNameStart = false
                continue
            }
            result.append(character)
            rest = rest.dropFirst()
            atNameStart = !(isNamePart(character) || character == ".")
        }
        return result
    }
}
