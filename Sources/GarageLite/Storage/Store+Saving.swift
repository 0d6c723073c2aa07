import Foundation
import GarageLiteCore

// Writing changes: a save of the unsaved changes with a call's own, and the streaming write
// of a large `parkAll`.
extension Store {
    /// Writes the unsaved changes and `changes` in one transaction, after `check` (which sees
    /// the unsaved changes, and throws to refuse them all); returns what `check` returned.
    /// Every change is checked again against the committed rows before it is written (see
    /// ``ChangeSet/checkedForWriting(in:now:)``): one that another writer made stale refuses
    /// the whole save.
    ///
    /// It runs on the writer, where writes are serialized: taking the unsaved changes,
    /// committing them, then forgetting them happen without another save in between. If the
    /// write fails, the unsaved changes stay unsaved.
    func saving<T>(
        _ operation: @autoclosure @escaping @Sendable () -> String, _ changes: ChangeSet, check: @escaping @Sendable (StoreView) throws -> T
    ) -> StoreWork<T> {
        saving(operation()) { view in (changes, try check(view)) }
    }

    /// Writes the unsaved changes and the changes `prepare` returns in one transaction;
    /// `prepare` sees the unsaved changes, and throws to refuse them all. Returns what it
    /// returned besides the changes.
    func saving<T>(
        _ operation: @autoclosure @escaping @Sendable () -> String, preparing prepare: @escaping @Sendable (StoreView) throws -> (ChangeSet, T)
    ) -> StoreWork<T> {
        StoreWork(operation: operation(), access: .write { [self] statements in
            // Changes recorded from now on go to new segments, kept when these are saved.
            let (saved, epoch) = unsaved.write { state in
                state.changes.seal()
                return (state.changes, state.epoch)
            }
            let isObserved = listener.isListening
            let (result, written, settled) = try Store.transaction(statements) {
                let (changes, result) = try prepare(StoreView(statements, pending: saved.isEmpty ? nil : saved, isWriting: true))
                var combined = changes
                if !saved.isEmpty {
                    combined = saved
                    combined.merge(changes)
                }
                // What the changes recorded earlier assumed of the store is checked here, where
                // nothing can change it before they are written.
                let now = Date()
                combined = try combined.checkedForWriting(in: statements, now: now)
                let written = try statements.apply(combined, now: now, recording: isObserved)
                // The revisions the saved parks' rows got, for the copies given provisional ones.
                let settled = try combined.provisionals.compactMap { key, provisional in
                    try statements.row(key, for: .metadata).map { (provisional, $0.revision) }
                }
                return (result, written, settled)
            }
            ProvisionalRevisions.settle(settled)
            if !saved.isEmpty {
                unsaved.write {
                    if $0.epoch == epoch { $0.changes = $0.changes.removing(saved: saved) }
                }
            }
            if let written, !written.isEmpty { listener.committed(written) }
            return result
        })
    }

    // MARK: - Streaming writes

    /// Writes the batches `next` produces on the calling thread in one immediate transaction
    /// on the writer, while it produces the next ones; returns the revisions of the
    /// ``Revisioned`` rows written and the children left as stored. Each row's
    /// ``RevisionGuard`` is checked before it is written: a refusal rolls back the whole
    /// transaction, and so does an error of `next`, or the cancellation of an `async` call.
    func writingStreaming(_ operation: String, next: @escaping () throws -> RowStream.Batch?) -> StoreCall<RowStream.Written> {
        .starting { feeding(try startStreaming(operation), operation, next: next) }
    }

    /// Hands the writer the next batch, and the following ones; then waits for the outcome.
    private func feeding(
        _ stream: RowStream, _ operation: String, next: @escaping () throws -> RowStream.Batch?
    ) -> StoreCall<RowStream.Written> {
        let engine = engine
        let batch: RowStream.Batch?
        do {
            batch = try Self.$isFeedingWriter.withValue(true, operation: next)
        } catch {
            return .failed(stream.fail(error, engine: engine, operation: operation))
        }
        guard let batch else {
            return StoreCall(run: { stream.finish() }, runAsync: {
                // Cancelled after the last batch: rolled back, as a write cancelled before it commits.
                if Task.isCancelled { return .failure(stream.fail(CancellationError(), engine: engine, operation: operation)) }
                return await stream.finish()
            }) { outcome in
                .done(try outcome.mapError { engine.garageError($0, operation: operation) }.get())
            }
        }
        return StoreCall(
            run: {
                do { try stream.send(batch) } catch { throw stream.fail(error, engine: engine, operation: operation) }
            },
            runAsync: {
                do {
                    try Task.checkCancellation()
                    try await stream.send(batch)
                } catch {
                    throw stream.fail(error, engine: engine, operation: operation)
                }
            },
            then: { self.feeding(stream, operation, next: next) })
    }

    /// Starts the writer's side: one transaction that writes each batch as it comes.
    private func startStreaming(_ operation: String) throws -> RowStream {
        let work = StoreWork<Void>(operation: operation, access: .write { _ in })
        try Self.checkNotReentrant(work)
        let stream = RowStream()
        let listener = listener, isObserved = listener.isListening
        engine.startWrite(operation) { connection in
            do {
                let statements = try connection.get()
                var written: ChangeSet? = isObserved ? ChangeSet() : nil
                var outcome = RowStream.Written()
                try Store.$isAccessing.withValue(true) {
                    try Store.transaction(statements) {
                        let now = Date()
                        // Guarded rows this stream wrote: one parked again (an object that is
                        // also a root) is this call's own, not stale.
                        var streamed: Set<ObjectKey> = []
                        while let batch = try stream.next() {
                            // What to park (the guards decided), then the batch at once; a guard
                            // that reads a row parked earlier in the batch reads it written.
                            var parks: [(key: ObjectKey, payload: RowPayload)] = []
                            var pending: Set<ObjectKey> = []
                            func writeParks() throws {
                                for (park, changed) in zip(parks, try statements.park(parks, now: now)) {
                                    if changed { written?.record(.park(park.payload), for: park.key) }
                                    if park.payload.revisionGuard?.revision != nil {
                                        outcome.revisions[park.key] = try statements.row(park.key, for: .metadata)?.revision
                                    }
                                }
                                parks = []
                                pending = []
                            }
                            for (key, payload) in batch {
                                if let check = payload.revisionGuard, check.needsStoredRevision {
                                    if pending.contains(key) { try writeParks() }
                                    let view = StoreView(statements, pending: nil)
                                    if !streamed.contains(key), try check.decide(key, storedIn: view) == .keep {
                                        // An encrypted copy can't be compared: its ciphertext differs every time.
                                        if try payload.isEncrypted || view.row(key, for: .content)?.data != payload.data {
                                            outcome.keptChildren.append(key)
                                        }
                                        continue
                                    }
                                    streamed.insert(key)
                                }
                                parks.append((key, payload))
                                pending.insert(key)
                            }
                            try writeParks()
                        }
                    }
                }
                // Told here, on the writer, like every commit: observers see commits in order.
                if let written, !written.isEmpty { listener.committed(written) }
                stream.complete(.success(outcome))
            } catch {
                stream.complete(.failure(error))
            }
        }
        return stream
    }
}
