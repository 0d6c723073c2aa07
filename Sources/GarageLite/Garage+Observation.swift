import Foundation
import GarageLiteCore

// Observing changes: asynchronous sequences fed after each commit of this garage, and of the
// other garages and processes that write the same file (Observation/CommitWatch.swift).
extension Garage {
    /// The changes to objects of type `T`, one element per commit that made some.
    ///
    /// ```swift
    /// for await changes in garage.changes(of: Note.self) {
    ///     for change in changes where change.kind == .parked {
    ///         refresh(change.identifier)
    ///     }
    /// }
    /// ```
    ///
    /// Elements arrive after the commit: a `retrieve` then sees the change. Changes made while
    /// autosave is off arrive when they are saved; those of a transaction, when it commits.
    /// The sequence ends when the task iterating it is cancelled; elements are buffered until
    /// they are read. Only changes are reported: parking an object as it is stored, or setting
    /// the status it has, commits nothing to tell.
    ///
    /// **Other garages and other processes.** The commits that other `Garage` instances and
    /// other processes (an app extension, a sync job's process) make to the same file arrive
    /// too, a few tens of milliseconds after them (the garage looks every 50 ms, while someone
    /// observes; nothing runs when nobody does). They differ from this garage's own in two
    /// ways, because they are found by comparing each observed object's revision,
    /// modification date and sync status with what the garage saw before: the commits made
    /// elsewhere between two looks arrive as one element, and a `deleteAll` or `migrateAll`
    /// arrives as one change per object instead of one for the type. A store in memory has no
    /// other writers. On an engine that can't tell other connections' commits (see
    /// ``GarageEngine``), only this garage's own arrive.
    ///
    /// A type refused its stored name, because another type of the process has it
    /// (``GarageError/typeNameCollision(typeName:type:existingType:)``), has no changes: the
    /// sequence ends at once.
    public func changes<T>(of type: T.Type) -> AsyncStream<[GarageChange]> {
        guard let typeName = try? storedTypeName(T.self) else { return AsyncStream { $0.finish() } }
        return observers.subscribe(typeName: typeName, store: store)
    }

    /// The object of type `T` parked under `identifier`, after each commit that changed it:
    /// its new value, or `nil` once it is deleted.
    ///
    /// ```swift
    /// for try await note in try garage.changes(to: Note.self, identifier: "n1") {
    ///     show(note)                 // nil when deleted
    /// }
    /// ```
    ///
    /// The sequence starts from the object as stored when this call returns (or as unsaved,
    /// or as changed in the transaction the call runs in), which it reads then: the first value
    /// yielded differs from it. The value is retrieved when the element is read, and each
    /// value is yielded once: a burst of commits read late yields the latest value once, and
    /// commits that leave the value as it was yield nothing (a claim then a release of an
    /// object that is not `Syncable`, or a `deleteAll` of its type when it is not stored; a
    /// `Syncable` object's value holds its status, so a claim changes it).
    /// Like ``changes(of:)``, the commits of other garages and
    /// other processes on the same file arrive too, with the same values: a commit made
    /// elsewhere right after this call returns is not missed. The values need not be
    /// `Sendable`: each is retrieved on the actor that iterates.
    ///
    /// - throws: ``GarageError/unsupportedIDConformance(_:)`` for an unsupported identifier type,
    ///   ``GarageError/typeNameCollision(typeName:type:existingType:)`` for a type refused its name,
    ///   and the errors of reading the object's version (as a `retrieve`'s, without decoding).
    public func changes<T: Decodable & SendableMetatype, ID: GarageIdentifier>(to type: T.Type, identifier: ID) throws -> ObjectChanges<T> {
        let identifier = try Identity.string(fromID: identifier)
        let changes = observers.subscribe(typeName: try storedTypeName(T.self), identifier: identifier, store: store)
        // Read after subscribing: a commit made in between is told, and is then found to be
        // already in this version, rather than missed.
        let start = try run(try observedVersion(T.self, identifier: identifier))
        return ObjectChanges(garage: self, identifier: identifier, start: start, changes: changes)
    }
}

extension Garage {
}

/// The values of one object after each commit that changed it: see
/// ``Garage/changes(to:identifier:)``.
public struct ObjectChanges<Object: Decodable & SendableMetatype>: AsyncSequence, Sendable {
    /// The object after a commit that changed it, or `nil` once it is deleted.
    public typealias Element = Object?
    /// What iterating throws: the errors of retrieving the object.
    public typealias Failure = any Error

    let garage: Garage
    let identifier: String
    /// The version of the object at subscription (`nil`: there was none), which the first
    /// value yielded must differ from.
    let start: ObservedVersion?
    let changes: AsyncStream<[GarageChange]>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(garage: garage, identifier: identifier, changes: changes.makeAsyncIterator(), last: start)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let garage: Garage
        let identifier: String
        var changes: AsyncStream<[GarageChange]>.AsyncIterator
        /// What the last value yielded was, or before any, the value at subscription: its
        /// row's revision and (for a `Syncable` object, whose value holds it) status;
        /// `.some(nil)` when there was no object.
        var last: ObservedVersion?

        /// The object after the next commit that changed it (`.some(nil)` once deleted), or
        /// `nil` when the sequence ends; retrieved on the actor that iterates (`for try await`
        /// calls this one).
        ///
        /// A value is yielded once: commits that leave it as the last one yielded, or as it was
        /// at subscription (a burst already read, a claim then a release of an object that is
        /// not `Syncable`), yield nothing.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Object?? {
            while await changes.next(isolation: actor) != nil {
                let (value, version) = try await garage.run(try garage.observing(Object.self, identifier: identifier))
                if last == version { continue }
                last = version
                return .some(value)
            }
            return nil
        }

        /// The object after the next commit that changed it (see ``next(isolation:)``).
        public mutating func next() async throws -> Object?? {
            try await next(isolation: nil)
        }
    }
}

/// What distinguishes one value of an observed object from the next: its row's revision and,
/// when the value holds it (a `Syncable` object), its sync status.
struct ObservedVersion: Sendable, Equatable {
    var revision: Int64
    var syncStatus: SyncStatus?

    /// The version of `row` as an object of type `T` sees it.
    init<T>(_ row: StoredRow, as type: T.Type) {
        revision = row.revision
        syncStatus = T.self is any Syncable.Type ? row.syncStatus : nil
    }
}
