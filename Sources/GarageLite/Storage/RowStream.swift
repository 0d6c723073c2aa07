import Foundation
import GarageLiteCore

/// Rows handed from the thread that encodes a large `parkAll` to the store's writer, which
/// writes them in one transaction as they come: encoding and writing overlap.
///
/// At most ``capacity`` batches wait at a time, so memory stays bounded however many objects
/// are parked. Either side can fail: the producer's error rolls the transaction back; the
/// writer's error stops the producer at its next batch. The producer waits for room either
/// blocking its thread (``send(_:)``) or suspended (``send(_:)-async``); the writer, on its own
/// thread, blocks. Every field is guarded by `condition`'s lock.
final class RowStream: @unchecked Sendable {
    typealias Batch = [(key: ObjectKey, payload: RowPayload)]
    /// What the writer returns: the revisions of the ``Revisioned`` rows it wrote, and the
    /// children it left as stored although the parked copy differs from them.
    struct Written: Sendable {
        var revisions: [ObjectKey: Int64] = [:]
        var keptChildren: [ObjectKey] = []
    }

    /// Raised on the writer when the producer failed: the transaction rolls back.
    struct ProducerFailed: Error {}

    static let capacity = 8

    private let condition = NSCondition()
    private var batches: [Batch] = []
    private var producerDone = false
    private var producerFailed = false
    private var outcome: Result<Written, any Error>?
    /// A suspended producer, resumed when there is room or an outcome.
    private var waitingProducer: CheckedContinuation<Void, Never>?

    // MARK: Producer

    /// Queues a batch, blocking while the queue is full; throws the writer's error if it has
    /// already failed.
    func send(_ batch: Batch) throws {
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= Self.capacity, outcome == nil {
            condition.wait()
        }
        try enqueue(batch)
    }

    /// Queues a batch, suspending while the queue is full.
    func send(_ batch: Batch) async throws {
        while !hasRoom() {
            await withCheckedContinuation { wait(until: { $0.hasRoomLocked }, $0) }
        }
        try locked { try enqueue(batch) }
    }

    private var hasRoomLocked: Bool { batches.count < Self.capacity || outcome != nil }

    private func hasRoom() -> Bool {
        locked { hasRoomLocked }
    }

    /// Resumes `continuation` at once when `ready`, or when the writer next makes progress.
    private func wait(until ready: (RowStream) -> Bool, _ continuation: CheckedContinuation<Void, Never>) {
        locked {
            if ready(self) {
                continuation.resume()
            } else {
                waitingProducer = continuation
            }
        }
    }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body()
    }

    /// Called with the lock held.
    private func enqueue(_ batch: Batch) throws {
        if case .failure(let error)? = outcome {
            throw error
        }
        batches.append(batch)
        condition.broadcast()
    }

    /// Says there is nothing more to write, and waits for the writer's outcome: success, or
    /// its error.
    func finish() -> Result<Written, any Error> {
        end(failed: false)
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil {
            condition.wait()
        }
        return outcome ?? .success(Written())
    }

    /// Says there is nothing more to write, and waits for the writer's outcome without
    /// blocking the calling thread.
    func finish() async -> Result<Written, any Error> {
        end(failed: false)
        while true {
            if let outcome = locked({ outcome }) { return outcome }
            await withCheckedContinuation { wait(until: { $0.outcome != nil }, $0) }
        }
    }

    /// Rolls the writer back after the producer's `error`; returns the error to throw: the
    /// writer's own, when the producer stopped because the writer had failed.
    func fail(_ error: any Error, engine: any StorageEngine, operation: String) -> any Error {
        end(failed: true)
        return engine.garageError(error, operation: operation)
    }

    private func end(failed: Bool) {
        condition.lock()
        producerDone = true
        producerFailed = failed
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Writer

    /// The next batch, or `nil` once the producer is done.
    func next() throws -> Batch? {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty, !producerDone {
            condition.wait()
        }
        if producerFailed {
            throw ProducerFailed()
        }
        guard !batches.isEmpty else { return nil }
        let batch = batches.removeFirst()
        resumeProducer()
        return batch
    }

    func complete(_ result: Result<Written, any Error>) {
        condition.lock()
        outcome = result
        resumeProducer()
        condition.unlock()
    }

    /// Called with the lock held.
    private func resumeProducer() {
        condition.broadcast()
        waitingProducer?.resume()
        waitingProducer = nil
    }
}
