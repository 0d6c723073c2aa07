import Foundation
import GarageLiteCore

// GarageStorage's forms of the façade's operations, for apps coming from it (README, "Coming from
// GarageStorage"): each is one call of the GarageLite form beside it. The rest of GarageStorage's
// API is GarageLite's own (`park`, `retrieve`, `delete`, `Syncable`); its store is read by
// `importGarageStorage(from:)` (Garage+Import.swift), its errors bridge to `NSError` in its domain
// (GarageError+NSError.swift), and `Garage.Compatibility` keeps its rules where an app asks.
extension Garage {
    /// The domain of the garage's errors bridged to `NSError`: ``GarageError/errorDomain``,
    /// `"GarageStorage"`, as in GarageStorage.
    public static let errorDomain = GarageError.errorDomain

    /// Deletes every object of every type (see ``deleteAllObjects()-6s113``), then calls
    /// `completion`. GarageStorage's form: it deleted in the background and called
    /// `completion` later, on the main queue; this one has deleted when it calls `completion`,
    /// on the calling thread, before it returns, and throws when the deletion fails.
    ///
    /// ```swift
    /// try garage.deleteAllObjects {
    ///     print("signed out")
    /// }
    /// ```
    public func deleteAllObjects(completion: () -> Void) throws {
        try deleteAllObjects()
        completion()
    }

    /// Moves every object parked under the name of `oldClass` to type `T` (see
    /// ``migrateAll(fromOldClassName:to:)-73yt5``). GarageStorage's form: the old name is
    /// `NSStringFromClass(oldClass)`, the name an Objective-C class's objects were stored
    /// under (for a Swift class, `Module.ClassName`; a `Codable` Swift class's objects were
    /// stored under its short name: pass that with `fromOldClassName:`).
    ///
    /// ```swift
    /// try garage.migrateAll(from: LegacyPerson.self, to: Person.self)
    /// ```
    @discardableResult
    public func migrateAll<T>(from oldClass: AnyClass, to type: T.Type) throws -> Int {
        try migrateAll(fromOldClassName: Identity.className(oldClass), to: T.self)
    }

    /// Moves every object parked under the name of `oldClass` to type `T` (see
    /// ``migrateAll(from:to:)-7kj8z``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func migrateAll<T>(from oldClass: AnyClass, to type: T.Type) async throws -> Int {
        try await migrateAll(fromOldClassName: Identity.className(oldClass), to: T.self)
    }

    /// Retrieves the objects of type `T` whose status is `syncStatus`, oldest change first.
    ///
    /// ```swift
    /// let pending: [Person] = try garage.retrieveAll(withStatus: .notSynced)
    /// ```
    ///
    /// Only rows of type `T` are read (GarageStorage scans every type, and fails on a
    /// store holding several), through the index on status and type.
    public func retrieveAll<T: Decodable & Syncable & SendableMetatype>(withStatus syncStatus: SyncStatus) throws -> [T] {
        try run(retrievingAll(T.self, withStatus: syncStatus))
    }

    /// Retrieves the objects of type `T` whose status is `syncStatus` (see
    /// ``retrieveAll(withStatus:)-40vqc``) without blocking the calling thread.
    public nonisolated(nonsending) func retrieveAll<T: Decodable & Syncable & SendableMetatype>(withStatus syncStatus: SyncStatus) async throws -> [T] {
        try await run(retrievingAll(T.self, withStatus: syncStatus))
    }
}
