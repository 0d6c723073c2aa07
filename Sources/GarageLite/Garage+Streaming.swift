import Foundation
import GarageLiteCore

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
    /// - throws: The errors of ``retrieve(_:identifier:)-1mhtr``, and the errors `body` throws,
    ///   which end the iteration.
    public func forEach<T: Decodable & SendableMetatype>(
        _ type: T.Type, batchSize: Int = 1000, _ body: (T) throws -> Void
    ) throws {
        var page = Page<T>(batchSize: batchSize)
        while let work = try page.next(in: self) { try page.advance(try run(work)).forEach(body) }
    }

    /// Calls `body` with every object of type `T` (see ``forEach(_:batchSize:_:)-7dzoi``),
    /// reading each batch without blocking the calling thread.
    ///
    /// In an `async` function, Swift picks this form for a body that doesn't `await`.
    public nonisolated(nonsending) func forEach<T: Decodable & SendableMetatype>(
        _ type: T.Type, batchSize: Int = 1000, _ body: (T) throws -> Void
    ) async throws {
        try await forEach(T.self, batchSize: batchSize) { (object: T) async throws in try body(object) }
    }

    /// Calls `body` with every object of type `T` (see ``forEach(_:batchSize:_:)-7dzoi``), reading
    /// each batch without blocking the calling thread; `body` may `await`.
    public nonisolated(nonsending) func forEach<T: Decodable & SendableMetatype>(
        _ type: T.Type, batchSize: Int = 1000, _ body: nonisolated(nonsending) (T) async throws -> Void
    ) async throws {
        var page = Page<T>(batchSize: batchSize)
        while let work = try page.next(in: self) {
            for object in page.advance(try await run(work)) { try await body(object) }
        }
    }
}

/// Where an iteration of ``Garage/forEach(_:batchSize:_:)-7dzoi`` stands: the batch it read last,
/// and the work that reads the next one.
struct Page<T: Decodable & SendableMetatype> {
    let batchSize: Int
    var lastIdentifier: String?
    var offset = 0
    var isLast = false

    init(batchSize: Int) {
        self.batchSize = max(1, batchSize)
    }

    /// The work that reads the next batch, from one snapshot; `nil` after the last one.
    func next(in garage: Garage) throws -> StoreWork<(objects: [T], last: String?, isLast: Bool)>? {
        guard !isLast else { return nil }
        let typeName = try garage.storedTypeName(T.self, listing: "visit every object of")
        let configuration = garage.configuration()
        let (lastIdentifier, offset, batchSize) = (lastIdentifier, offset, batchSize)
        return garage.reading("read all \(typeName)") { view in
            let decoder = configuration.decoder(view)
            let rows = try view.rows(ofType: typeName, after: lastIdentifier, offset: offset, limit: batchSize)
            let objects = try rows.map { try configuration.decode(T.self, $0.get(), with: decoder) }
            return (objects, rows.last?.key.identifier, rows.count < batchSize)
        }
    }

    /// Moves past the batch just read; returns its objects.
    mutating func advance(_ batch: (objects: [T], last: String?, isLast: Bool)) -> [T] {
        offset += batch.objects.count
        lastIdentifier = batch.last
        isLast = batch.isLast || batch.last == nil
        return batch.objects
    }
}
