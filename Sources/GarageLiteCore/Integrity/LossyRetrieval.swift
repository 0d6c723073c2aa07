import Foundation

/// What ``Garage/retrieveAllLossy(_:)-2impn`` found: the objects it could retrieve, and a failure
/// for each object it could not.
///
/// ```swift
/// let result = try garage.retrieveAllLossy(Person.self)
/// show(result.objects)
/// for failure in result.failures {
///     log("\(failure.typeName) \(failure.identifier) can't be read: \(failure.error)")
/// }
/// ```
public struct LossyRetrieval<Object> {
    /// The objects that could be retrieved, in identifier order.
    public var objects: [Object] = []
    /// The objects that could not, in identifier order.
    public var failures: [RetrievalFailure] = []

    /// Whether every object was retrieved.
    public var isComplete: Bool { failures.isEmpty }

    /// Makes one of the given values, each stored as given.
    package init(objects: [Object] = [], failures: [RetrievalFailure] = []) {
        self.objects = objects
        self.failures = failures
    }
}

extension LossyRetrieval: Sendable where Object: Sendable {}

/// An object that could not be retrieved: its type name, its identifier, and why.
///
/// `error` is what ``Garage/retrieve(_:identifier:)-1mhtr`` would have thrown for it: a
/// `DecodingError` when its stored JSON no longer matches its Swift type (or a reference is
/// missing), ``GarageError/corruptData(typeName:identifier:reason:)``,
/// ``GarageError/decryptionFailed(typeName:identifier:reason:)``, and so on. Park a valid
/// object under the same identifier to replace it, or delete it.
public struct RetrievalFailure: Error, Sendable, CustomStringConvertible {
    /// The type name of the object's row.
    public let typeName: String
    /// The object's identifier.
    public let identifier: String
    /// Why it could not be retrieved.
    public let error: any Error

    public var description: String {
        "The object of type \(typeName) with identifier \(identifier) could not be retrieved: \(error)"
    }

    /// Makes one of the given values, each stored as given.
    package init(typeName: String, identifier: String, error: any Error) {
        self.typeName = typeName
        self.identifier = identifier
        self.error = error
    }
}
