import Foundation
import GRDB

// Streaming reads: visiting every object of a type without holding them all in memory.
extension Garage {
    /// Calls `body` with every object of type `T`, in identifier order, holding at most
    /// `batchSize` of them in memory at a time.
    ///
    /// ```swift
    /// var total = 0
    /// try garage.forEach(Order.self) { order in
    ///     total += order.amount
    /// }
    /// ```
    ///
    /// Objects are read in batches, each from one snapshot of the store; `body` runs between
    /// reads, so it may call the garage, and writers are never held up. An object parked or
    /// deleted during the iteration may or may not be visited. The references of the
    /// objects of one batch are decoded once per batch.
    ///
    /// - throws: The errors of ``retrieve(_:identifier:)-394v9``, and the errors `body` throws,
    ///   which end the iteration.
    public func forEach<T: Decodable>(
        _ type: T.Type, batchSize: Int = 1000, _ body: (T) throws -> Void
    ) throws {
        let typeName = Identity.typeName(T.self)
        let configuration = configuration()
        let batchSize = max(1, batchSize)
        var lastIdentifier: String?
        var offset = 0
        while true {
            let (objects, last, isLastBatch) = try read("read all \(typeName)") { db, pending in
                let decoder = Self.decoder(db, pending, configuration)
                let rows: [StoredRow]
                if let pending, pending.touches(type: typeName) {
                    // Unsaved changes live in memory already: page through the merged rows.
                    let all = try pending.rows(ofType: typeName, in: db, now: Date())
                    rows = Array(all.dropFirst(offset).prefix(batchSize))
                } else {
                    rows = try Store.rows(db, type: typeName, after: lastIdentifier, limit: batchSize)
                }
                let objects = try rows.map { try decoder.decode(T.self, from: $0) }
                return (objects, rows.last?.key.identifier, rows.count < batchSize)
            }
            for object in objects {
                try body(object)
            }
            guard !isLastBatch, let last else { return }
            lastIdentifier = last
            offset += objects.count
        }
    }
}
