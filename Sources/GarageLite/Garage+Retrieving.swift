import Foundation
import GarageLiteCore

// Reading objects: by identifier, all of a type, by status; and counting them.
extension Garage {
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
    /// `DecodingError.dataCorrupted` ("Missing Identifiable reference ...") otherwise, but
    /// for an object the server deleted (see <doc:ReferenceRule>), which an array, set or
    /// dictionary leaves out.
    ///
    /// - parameter type: The type of the object, which names its rows.
    /// - parameter identifier: A `String`, `UUID`, `Int` or other `LosslessStringConvertible`.
    /// - throws: ``GarageError/unsupportedIDConformance(_:)`` for another identifier type;
    ///   `DecodingError`; ``GarageError/referenceCycle(typeName:identifier:cycle:)``;
    ///   ``GarageError/missingEncryptionDelegate(typeName:identifier:)``;
    ///   ``GarageError/decryptionFailed(typeName:identifier:reason:)`` when the delegate fails.
    public func retrieve<T: Decodable & SendableMetatype, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) throws -> T? {
        try run(retrieving(T.self, identifier: identifier))
    }

    /// Retrieves an object (see ``retrieve(_:identifier:)-1mhtr``) without blocking the calling thread.
    public nonisolated(nonsending) func retrieve<T: Decodable & SendableMetatype, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) async throws -> T? {
        try await run(retrieving(T.self, identifier: identifier))
    }

    /// Retrieves every object of type `T`, in identifier order: the order of the identifiers'
    /// UTF-8 bytes, on every engine (`"B"` before `"a"`, `"a"` before `"é"`; `"10"` before `"9"`).
    ///
    /// ```swift
    /// let people = try garage.retrieveAll(Person.self)
    /// ```
    ///
    /// It throws the error of the first object that can't be retrieved, which names its type
    /// and identifier; ``retrieveAllLossy(_:)-2impn`` returns the others beside the failures.
    public func retrieveAll<T: Decodable & SendableMetatype>(_ type: T.Type) throws -> [T] {
        try run(retrievingAll(T.self))
    }

    /// Retrieves every object of type `T` (see ``retrieveAll(_:)-3r0hm``) without blocking the calling thread.
    public nonisolated(nonsending) func retrieveAll<T: Decodable & SendableMetatype>(_ type: T.Type) async throws -> [T] {
        try await run(retrievingAll(T.self))
    }

    /// Retrieves every object of type `T` that can be retrieved, and says which can't and why,
    /// where ``retrieveAll(_:)-3r0hm`` throws at the first object that can't.
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
    public func retrieveAllLossy<T: Decodable & SendableMetatype>(_ type: T.Type) throws -> LossyRetrieval<T> {
        try run(retrievingEach(T.self))
    }

    /// Retrieves every object of type `T` that can be retrieved (see ``retrieveAllLossy(_:)-2impn``)
    /// without blocking the calling thread.
    public nonisolated(nonsending) func retrieveAllLossy<T: Decodable & SendableMetatype>(_ type: T.Type) async throws -> LossyRetrieval<T> {
        try await run(retrievingEach(T.self))
    }

    // MARK: - Counting

    /// The number of objects of type `T`, or of those with status `syncStatus`.
    ///
    /// ```swift
    /// let notes = try garage.count(Note.self)
    /// let backlog = try garage.count(Note.self, withStatus: .notSynced)
    /// ```
    ///
    /// A count by status is counted in the index: its cost grows with the number of such
    /// objects, not with the size of the store.
    public func count<T>(_ type: T.Type, withStatus syncStatus: SyncStatus? = nil) throws -> Int {
        try run(counting(T.self, withStatus: syncStatus))
    }

    /// The number of objects of type `T`, or of those with status `syncStatus` (see
    /// ``count(_:withStatus:)-x947``), without blocking the calling thread.
    public nonisolated(nonsending) func count<T>(_ type: T.Type, withStatus syncStatus: SyncStatus? = nil) async throws -> Int {
        try await run(counting(T.self, withStatus: syncStatus))
    }

    /// The number of objects of every type.
    ///
    /// ```swift
    /// let total = try garage.count()
    /// ```
    public func count() throws -> Int {
        try run(countingAll)
    }

    /// The number of objects of every type, without blocking the calling thread.
    public nonisolated(nonsending) func count() async throws -> Int {
        try await run(countingAll)
    }

    /// The identifiers of every object of type `T`, in the order of their UTF-8 bytes (see
    /// `retrieveAll(_:)`).
    public func identifiers<T>(of type: T.Type) throws -> [String] {
        try run(listingIdentifiers(T.self))
    }

    /// The identifiers of every object of type `T`, in order, without blocking the calling thread.
    public nonisolated(nonsending) func identifiers<T>(of type: T.Type) async throws -> [String] {
        try await run(listingIdentifiers(T.self))
    }
}
