// The same garage on PostgreSQL: a server with several instances, and sync workers on several
// machines claiming from one schema.

// snippet.postgres
import GarageLite
import GarageLitePostgres
// snippet.hide

struct Order: Codable, Identifiable, Syncable, Sendable {
    var id: String
    var total: Int
    var syncStatus: SyncStatus = .notSynced
}

/// Your web service, which takes a batch of orders, and the identifiers of orders deleted.
func upload(_ orders: [Order], deleting deleted: [String]) async throws {}
// snippet.show

// The schema "orders" of the database "shop", created on first use; every instance opens the same.
let garage = try Garage(postgresURL: "postgres://shop@db.internal/shop?schema=orders&sslmode=require")
try garage.park(Order(id: "o-1", total: 4_200))

// A worker on any machine: claims skip the rows other workers hold (FOR UPDATE SKIP LOCKED).
while true {
    let claim = try await garage.claim(Order.self, limit: 100)
    if claim.isEmpty { break }          // no edit and no deletion left
    try await upload(claim.objects, deleting: claim.deletions)
    try await garage.complete(claim)
}
// snippet.end
