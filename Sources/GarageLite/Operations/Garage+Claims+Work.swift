// The work behind the entry points of Garage+Claims.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// The claim of `claim(_:limit:status:)`; `withBases`, with each object's version before
    /// its edit (``Claim/bases``: the sync engine's, to name what a later download replaced).
    func claiming<T: Decodable & SendableMetatype>(_ type: T.Type, limit: Int, status: SyncStatus,
                                                   withBases: Bool = false) throws -> StoreWork<Claim<T>> {
        let configuration = configuration()
        var decodingBases: (@Sendable (StoreView) -> (StoredRow) throws -> T)?
        if withBases {
            decodingBases = { view in
                // A decoder of its own: one instance per object, and the base is another version.
                let decoder = configuration.decoder(view, bases: true)
                return { row in try configuration.decode(T.self, row, with: decoder) }
            }
        }
        return store.claiming(
            try storedTypeName(T.self, listing: "claim"), limit: limit, status: status, maximumAttempts: maximumUploadAttempts,
            decoding: { view in
                let decoder = configuration.decoder(view)
                return { row in try configuration.decode(T.self, row, with: decoder) }
            },
            decodingBases: decodingBases,
            isRowFailure: { [store] in store.isRowFailure($0) })
    }

    func failing<T>(_ claim: Claim<T>, retryAfter: TimeInterval, error: (any Error)?) -> StoreWork<ClaimReport> {
        let failure = Store.ClaimEnd.failed(error: error.map { "\($0)" }, retryAt: Date().addingTimeInterval(retryAfter))
        return store.endingClaim(claim.ticket, "release") { _ in failure }
    }

    func completing<T>(_ claim: Claim<T>, rejected: [String: any Error], retryAfter: TimeInterval) -> StoreWork<ClaimReport> {
        let retryAt = Date().addingTimeInterval(retryAfter)
        let errors = rejected.mapValues { "\($0)" }
        return store.endingClaim(claim.ticket, "complete") { identifier in
            errors[identifier].map { .failed(error: $0, retryAt: retryAt) } ?? .completed()
        }
    }

}
