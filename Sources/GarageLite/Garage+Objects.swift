import Foundation
import GarageLiteCore

// Parking objects: thin entry points, each pair running one description of its work (a
// StoreCall, in Operations/Garage+Objects+Work.swift) synchronously or asynchronously.
// Retrieving and counting are in Garage+Retrieving.swift, deleting in Garage+Deleting.swift.
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
    /// use ``park(_:children:)-2bmtg``, which takes it `inout`.
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

    /// Parks `object` (see ``park(_:children:)-3a5in``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func park<T: Encodable>(_ object: T, children: ChildParking = .refuseStale) async throws -> ParkReport {
        try await run(parking([object], children: children))
    }

    /// Parks `object` (see ``park(_:children:)-3a5in``), then sets it to what the store now
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
    /// The object is read back after the park, as ``retrieve(_:identifier:)-1mhtr`` would: a
    /// child left as stored (``ChildParking/keepStored``, ``ChildParking/onlyNew``) comes back
    /// as stored. A class instance is not replaced: its revision (and its children's) is set on
    /// it, as ``park(_:children:)-3a5in`` does.
    ///
    /// - throws: the errors of ``park(_:children:)-3a5in``, and of the read back (then the park
    ///   was written, and `object` is unchanged).
    @discardableResult
    public func park<T: Codable & SendableMetatype>(_ object: inout T, children: ChildParking = .refuseStale) throws -> ParkReport {
        let (report, stored) = try run(parkingAndReading(object, children: children))
        if let stored { object = stored }
        return report
    }

    /// Parks `object` and sets it to what the store now holds (see ``park(_:children:)-2bmtg``)
    /// without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func park<T: Codable & SendableMetatype>(
        _ object: inout T, children: ChildParking = .refuseStale
    ) async throws -> ParkReport {
        let (report, stored) = try await run(parkingAndReading(object, children: children))
        if let stored { object = stored }
        return report
    }

    /// Parks every object of `objects` (see ``park(_:children:)-3a5in``), all in one
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
    ///   ``park(_:children:)-3a5in``.
    @discardableResult
    public func parkAll<T: Encodable>(_ objects: [T], children: ChildParking = .refuseStale) throws -> ParkReport {
        try run(parkingAll(objects, children: children))
    }

    /// Parks every object of `objects` (see ``parkAll(_:children:)-58r2e``) without blocking
    /// the calling thread; large arrays stream as they do there, the writer waiting for the
    /// rows this task encodes.
    @discardableResult
    public nonisolated(nonsending) func parkAll<T: Encodable>(_ objects: [T], children: ChildParking = .refuseStale) async throws -> ParkReport {
        try await run(parkingAll(objects, children: children))
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
    ///   ``park(_:children:)-3a5in``.
    @discardableResult
    public func park<T: Encodable, ID: GarageIdentifier>(_ value: T, identifier: ID) throws -> String {
        try run(parking(value, identifier: identifier))
    }

    /// Parks `value` under `identifier` (see ``park(_:identifier:)-7mhtc``) without blocking
    /// the calling thread.
    @discardableResult
    public nonisolated(nonsending) func park<T: Encodable, ID: GarageIdentifier>(_ value: T, identifier: ID) async throws -> String {
        try await run(parking(value, identifier: identifier))
    }

    /// From this many objects, `parkAll` writes rows while it encodes the next ones.
    public static let streamingThreshold = 1_000

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
}

extension Garage.Configuration {
}
