import Foundation
import GRDB

/// What ``Garage/retrieveAllLossy(_:)-92q15`` found: the objects it could retrieve, and a failure
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
}

extension LossyRetrieval: Sendable where Object: Sendable {}

/// An object that could not be retrieved: its type name, its identifier, and why.
///
/// `error` is what ``Garage/retrieve(_:identifier:)-394v9`` would have thrown for it: a
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
}

extension Garage {
    /// Decodes every visible row of `typeName`, collecting the rows that fail instead of
    /// throwing. Errors of the store itself (SQLite, a busy or damaged file) still throw.
    static func retrieveEach<T: Decodable>(
        _ type: T.Type, typeName: String, in db: Database, pending: ChangeSet?, _ configuration: Configuration
    ) throws -> LossyRetrieval<T> {
        let decoder = decoder(db, pending, configuration)
        var result = LossyRetrieval<T>()
        func failed(_ key: RowKey, _ error: any Error) throws {
            if isStoreError(error) { throw error }
            result.failures.append(RetrievalFailure(typeName: key.type, identifier: key.identifier, error: error))
        }
        let rows: [StoredRow]
        do {
            rows = try visibleRows(ofType: typeName, in: db, pending: pending)
        } catch where !isStoreError(error) && !(pending?.touches(type: typeName) ?? false) {
            // A row that can't even be read (a column holding a value of the wrong type): read
            // the rows one by one, to find which.
            for identifier in try Store.identifiers(db, type: typeName) {
                let key = RowKey(type: typeName, identifier: identifier)
                do {
                    if let row = try visibleRow(key, in: db, pending: pending) {
                        result.objects.append(try decoder.decode(T.self, from: row))
                    }
                } catch {
                    try failed(key, error)
                }
            }
            return result
        }
        for row in rows {
            do {
                result.objects.append(try decoder.decode(T.self, from: row))
            } catch {
                try failed(row.key, error)
            }
        }
        return result
    }

    /// Whether `error` is the store's rather than one row's: it stops a lossy retrieve.
    static func isStoreError(_ error: any Error) -> Bool {
        if error is DatabaseError { return true }
        switch error as? GarageError {
        case .reentrantCall?, .storeBusy?, .storageFailure?, .damagedStore?, .readOnlyStore?, .storeFull?:
            return true
        default:
            return false
        }
    }
}
