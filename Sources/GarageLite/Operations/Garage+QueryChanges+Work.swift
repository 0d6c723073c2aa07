// The work behind the entry points of Garage+QueryChanges.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// The identifier, revision and status of each object `query` matches, in its order.
    func queryVersions(_ query: RowQuery) -> StoreWork<[QueryVersion]> {
        reading("query \(query.typeName)") { view in
            try view.rows(matching: query, for: .metadata).map(QueryVersion.init)
        }
    }

    /// The objects `query` matches and their versions, from one snapshot.
    func observing<T: Decodable & SendableMetatype>(_ type: T.Type, _ query: RowQuery)

        -> StoreWork<([T], [QueryVersion])> {
        let configuration = configuration()
        return reading("query \(query.typeName)") { view in
            let decoder = configuration.decoder(view)
            let rows = try view.rows(matching: query, for: .all)
            return (try rows.map { try configuration.decode(T.self, $0, with: decoder) }, rows.map(QueryVersion.init))
        }
    }

}

