// The work behind the entry points of Garage+Observation.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// The object `identifier` of type `T` and its version, read in one snapshot.
    func observing<T: Decodable & SendableMetatype>(_ type: T.Type, identifier: String) throws -> StoreWork<(T?, ObservedVersion?)> {
        let key = ObjectKey(typeName: try storedTypeName(T.self), identifier: identifier)
        let configuration = configuration()
        return reading("retrieve \(key)") { view in
            guard let row = try view.row(key, for: .all) else { return (nil, nil) }
            let value = try configuration.decode(T.self, row, with: configuration.decoder(view))
            return (value, ObservedVersion(row, as: T.self))
        }
    }

    /// The version of the object `identifier` of type `T` (`nil` when there is none), without
    /// its content: where ``changes(to:identifier:)`` starts.
    func observedVersion<T>(_ type: T.Type, identifier: String) throws -> StoreWork<ObservedVersion?> {
        let key = ObjectKey(typeName: try storedTypeName(T.self), identifier: identifier)
        return reading("read the version of \(key)") { view in
            try view.row(key, for: .metadata).map { ObservedVersion($0, as: T.self) }
        }
    }

}
