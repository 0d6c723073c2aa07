import Foundation

/// Rows handed from the thread that encodes a large `parkAll` to the store's writer, which
/// writes them in one transaction as they come: encoding and writing overlap.
///
/// At most ``capacity`` batches wait at a time, so memory stays bounded however many objects
/// are parked. Either side can fail: the producer's error rolls the transaction back; the
/// writer's error stops the producer at its next batch.
final class RowStream: @unchecked Sendable {
    typealias Batch = [(key: RowKey, payload: RowPayload)]

    /// Raised on the writer when the producer failed: the transaction rolls back.
    struct ProducerFailed: Error {}

    static let capacity = 8

    private let condition = NSCondition()
    private var batches: [Batch] = []
    private var producerDone = false
    private var producerFailed = false
    private var outcome: Result<ChangeSet?, any Error>?

    // MARK: Producer

    /// Queues a batch; throws the writer's error if it has already failed.
    func send(_ batch: Batch) throws {
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= Self.capacity, outcome == nil {
            condition.wait()
        }
        if case .failure(let error)? = outcome {
            throw error
        }
        batches.append(batch)
        condition.broadcast()
    }

    /// Says there is nothing more to write (`failed`: roll back instead).
    func finish(failed: Bool) {
        condition.lock()
        producerDone = true
        producerFailed = failed
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the writer, and returns what it did: the changes written (when someone
    /// observes them), or its error.
    func waitForOutcome() -> Result<ChangeSet?, any Error> {
        condition.lock()
        defer { condition.unlock() }
        while outcome == nil {
            condition.wait()
        }
        return outcome ?? .success(nil)
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
        condition.broadcast()
        return batch
    }

    func complete(_ result: Result<ChangeSet?, any Error>) {
        condition.lock()
        outcome = result
        condition.broadcast()
        condition.unlock()
    }
}
