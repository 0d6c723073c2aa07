import Foundation

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
    /// other writers.
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
    /// The value is retrieved when the element is read, and each value is yielded once: a
    /// burst of commits read late yields the latest value once, and commits that leave the
    /// value as it was yield nothing (a claim then a release of an object that is not
    /// `Syncable`; a `Syncable` object's value holds its status, so a claim changes it).
    /// Like ``changes(of:)``, the commits of other garages and
    /// other processes on the same file arrive too, with the same values: a commit made
    /// elsewhere right after this call returns is not missed. The values need not be
    /// `Sendable`: each is retrieved on the actor that iterates.
    ///
    /// - throws: ``GarageError/unsupportedIDConformance(_:)`` for an unsupported identifier type,
    ///   ``GarageError/typeNameCollision(typeName:type:existingType:)`` for a type refused its name.
    public func changes<T: Decodable & SendableMetatype, ID: GarageIdentifier>(to type: T.Type, identifier: ID) throws -> ObjectChanges<T> {
        let identifier = try Identity.string(fromID: identifier)
        return ObjectChanges(
            garage: self, identifier: identifier,
            changes: observers.subscribe(typeName: try storedTypeName(T.self), identifier: identifier, store: store))
    }
}

/// What distinguishes one value of an observed object from the next: its row's revision and,
/// when the value holds it (a `Syncable` object), its sync status.
struct ObservedVersion: Sendable, Equatable {
    var revision: Int64
    var syncStatus: SyncStatus?
}

extension Garage {
    /// The object `identifier` of type `T` and its version, read in one snapshot.
    func observing<T: Decodable & SendableMetatype>(_ type: T.Type, identifier: String) throws -> StoreWork<(T?, ObservedVersion?)> {
        let key = ObjectKey(typeName: try storedTypeName(T.self), identifier: identifier)
        let configuration = configuration()
        let holdsStatus = T.self is any Syncable.Type
        return reading("retrieve \(key)") { view in
            guard let row = try view.row(key, for: .all) else { return (nil, nil) }
            let value = try configuration.decode(T.self, row, with: configuration.decoder(view))
            return (value, ObservedVersion(revision: row.revision, syncStatus: holdsStatus ? row.syncStatus : nil))
        }
    }
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
    let changes: AsyncStream<[GarageChange]>

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(garage: garage, identifier: identifier, changes: changes.makeAsyncIterator())
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let garage: Garage
        let identifier: String
        var changes: AsyncStream<[GarageChange]>.AsyncIterator
        /// What the last value yielded was: its row's revision and (for a `Syncable` object,
        /// whose value holds it) status; `.some(nil)` once it was deleted, `nil` before any.
        var last: ObservedVersion??

        /// The object after the next commit that changed it (`.some(nil)` once deleted), or
        /// `nil` when the sequence ends; retrieved on the actor that iterates (`for try await`
        /// calls this one).
        ///
        /// A value is yielded once: commits that leave it as the last one yielded (a burst
        /// already read, a claim then a release of an object that is not `Syncable`) yield
        /// nothing.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> Object?? {
            while await changes.next(isolation: actor) != nil {
                let (value, version) = try await garage.run(try garage.observing(Object.self, identifier: identifier))
                if case .some(let last) = last, last == version { continue }
                last = .some(version)
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
