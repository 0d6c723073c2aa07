import Foundation
import GarageLiteCore
import GarageLiteSQLite

/// Runs the whole sync cycle for the types an app registers, against its ``SyncTransport``:
/// uploads the local changes and deletions in batches (claims, so that no other job or process
/// takes them meanwhile), stores the server's answers, downloads the server's changes after a
/// cursor it keeps in the store, and merges each conflict with a local edit three ways
/// (``SyncMerge``, with the base the store keeps).
///
/// ```swift
/// let engine = SyncEngine(garage: garage, transport: NotesAPI(base: url), types: [.of(Note.self)])
/// let task = Task { await engine.run() }          // syncs on every change, and every minute
/// for await status in engine.statusUpdates() { show(status) }   // "uploading Note 50 of 120"
/// task.cancel()                                   // stops after giving back what it held
/// ```
///
/// ``run()`` syncs when the app's changes to those types are observed (after a pause of
/// ``Configuration/debounce`` with no new change), every ``Configuration/pollInterval`` for the
/// server's changes, and, after a failure, again after a growing backoff. ``sync()`` runs one
/// cycle now. One cycle runs at a time per engine; several engines (in several processes, or
/// on several garages of one file) share the work: each upload batch is a claim, and one
/// engine at a time downloads a type (a lock in the store, whose lease its holder renews).
///
/// - An object the server refuses (``UploadResult/failed(_:)``) is retried alone, after
///   ``Configuration/retryAfter``, and held after ``Garage/maximumUploadAttempts`` refusals
///   (``SyncEngineStatus/held``), while the rest syncs.
/// - A batch whose upload throws is given back as it was: an outage holds nothing, and
///   ``run()`` tries again after its backoff. (So an object that makes your server fail must be
///   answered ``UploadResult/failed(_:)``, not with an error for the whole batch, to be held.)
/// - A process killed during an upload leaves a claim that the next garage opening the store
///   releases at once (its process ended); a claim of another machine's engine expires after
///   ``Configuration/lease``, which a working engine renews.
/// - Cancelling the task that runs ``sync()`` or ``run()`` gives back the batch being uploaded
///   (without counting a failure); an upload the server answered is completed first, whatever
///   the cancellation, since the server has it.
///
/// The models must be `Syncable`: their status is how the engine finds what to upload.
public final class SyncEngine: Sendable {
    /// How a ``SyncEngine`` paces its work.
    public struct Configuration: Sendable {
        /// How many changes one upload sends at most.
        public var batchSize = 50
        /// How long ``run()`` waits after a change for the next one before it syncs, in seconds.
        public var debounce: TimeInterval = 1
        /// How often ``run()`` downloads when nothing changed locally, in seconds; `nil`: only
        /// after local changes and on ``sync()``.
        public var pollInterval: TimeInterval? = 60
        /// How long an object the server refused waits before it is uploaded again, in seconds (an
        /// edit of it ends the wait: it is a new chance).
        public var retryAfter: TimeInterval = 30
        /// The longest ``run()`` waits after failed syncs (the wait doubles from 1 second), in seconds.
        public var maximumBackoff: TimeInterval = 300
        /// How long another engine's claim lasts without being renewed, in seconds: after it,
        /// its objects are released (that engine is presumed dead). A working engine renews its
        /// claim every third of it.
        public var lease: TimeInterval = 600
        /// How many times one sync uploads an object that keeps conflicting (each conflict is
        /// merged and uploaded again) before leaving it for the next sync.
        public var maximumRounds = 3
        /// How often a sync also forgets the deletions of the engine's types that the server
        /// has and no object references any more (``Garage/purgeSyncedTombstones()-96a7d``),
        /// in seconds: at the first sync, then after this long; `nil`: never.
        public var tombstonePurgeInterval: TimeInterval? = 3600

        /// The defaults.
        public init() {}
    }

    let garage: Garage
    let transport: any SyncTransport
    let types: [SyncedType]
    let configuration: Configuration
    private let state = Protected(State())

    private struct State {
        var status = SyncEngineStatus()
        var watchers: [UUID: AsyncStream<SyncEngineStatus>.Continuation] = [:]
        var isSyncing = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        /// When the last sync forgot the synced tombstones.
        var lastTombstonePurge: Date?
    }

    /// An engine that syncs `types` of `garage` through `transport`.
    public init(garage: Garage, transport: some SyncTransport, types: [SyncedType], configuration: Configuration = Configuration()) {
        self.garage = garage
        self.transport = transport
        self.types = types
        self.configuration = configuration
    }

    /// What the engine does now, and how its last sync went.
    public var status: SyncEngineStatus { state.read(\.status) }

    /// The engine's status now, then after each change of it, until the caller stops iterating.
    public func statusUpdates() -> AsyncStream<SyncEngineStatus> {
        let (stream, continuation) = AsyncStream<SyncEngineStatus>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        state.write { state in
            state.watchers[id] = continuation
            continuation.yield(state.status)
        }
        continuation.onTermination = { [weak self] _ in self?.state.write { _ = $0.watchers.removeValue(forKey: id) } }
        return stream
    }

    func update(_ change: (inout SyncEngineStatus) -> Void) {
        state.write { state in
            let old = state.status
            change(&state.status)
            if state.status != old { for watcher in state.watchers.values { watcher.yield(state.status) } }
        }
    }

    // MARK: - One sync

    /// Syncs every type once now: releases dead claims, uploads every change that can be
    /// uploaded, downloads the server's changes, and uploads the merges of conflicts. When a
    /// sync of this engine is running, waits for it, then runs.
    ///
    /// - throws: The transport's error (the batch it failed is given back, and uploaded by a
    ///   later sync), the store's errors, or `CancellationError`.
    @discardableResult
    public func sync() async throws -> SyncEngineReport {
        await acquire()
        defer { relinquish() }
        do {
            try Task.checkCancellation()
            _ = try await garage.releaseStaleClaims()
            _ = try await garage.releaseStaleClaims(olderThan: configuration.lease)
            var report = SyncEngineReport()
            for type in types { try await type.cycle(self, &report) }
            try await purgeTombstonesIfDue(&report)
            update {
                $0.activity = .idle
                $0.lastError = nil
                $0.retryDate = nil
                $0.lastSync = Date()
                $0.held = report.held
                $0.refused = report.refused
                $0.unreadable = report.unreadable
                $0.replaced = report.replaced
                $0.lastReport = report
            }
            return report
        } catch {
            update {
                $0.activity = .idle
                if !(error is CancellationError) { $0.lastError = "\(error)" }
            }
            throw error
        }
    }

    /// Forgets the synced tombstones of the engine's types, when the last time was
    /// ``Configuration/tombstonePurgeInterval`` ago or more.
    private func purgeTombstonesIfDue(_ report: inout SyncEngineReport) async throws {
        guard let interval = configuration.tombstonePurgeInterval else { return }
        let now = Date()
        guard state.read({ $0.lastTombstonePurge.map { now.timeIntervalSince($0) >= interval } ?? true }) else { return }
        let typeNames = try types.map { try $0.typeName(garage) }
        report.tombstonesPurged = try await garage.purgeSyncedTombstones(ofTypes: typeNames)
        state.write { $0.lastTombstonePurge = now }
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            state.write { state in
                if state.isSyncing {
                    state.waiting.append(continuation)
                } else {
                    state.isSyncing = true
                    continuation.resume()
                }
            }
        }
    }

    private func relinquish() {
        state.write { state in
            if state.waiting.isEmpty { state.isSyncing = false } else { state.waiting.removeFirst().resume() }
        }
    }

    // MARK: - Running

    /// Syncs until the calling task is cancelled: at once, then after each observed change of
    /// the registered types (once ``Configuration/debounce`` passes without another), every
    /// ``Configuration/pollInterval`` for the server's changes, and after a failure, once its
    /// backoff (1, 2, 4… seconds, up to ``Configuration/maximumBackoff``) has passed, or the
    /// wait the server asked for (``SyncServerBusy``). Its failures are in ``status``.
    ///
    /// With a ``LiveSyncTransport``, it also listens to the server: it downloads as soon as the
    /// server says a feed moved, and once each time it connects; it polls only while it can't
    /// listen (``SyncEngineStatus/isListening``), and connects again after a backoff.
    public func run() async {
        let (wakes, wake) = AsyncStream<Wake>.makeStream()
        await withTaskGroup(of: Void.self) { group in
            for type in types {
                let changes = type.changes(garage)
                group.addTask {
                    for await batch in changes {
                        if batch.contains(where: { $0.kind == .deleted }) {
                            wake.yield(.deletion)
                        } else if batch.contains(where: { $0.kind == .parked }) {
                            wake.yield(.change)
                        }
                    }
                }
            }
            if let live = transport as? any LiveSyncTransport {
                group.addTask { await self.listen(to: live, wake) }
            }
            await self.loop(wakes, wake)
            wake.finish()
            group.cancelAll()
        }
    }

    /// Why ``run()`` wakes up: a change of a registered type (a deletion, which counts of
    /// pending objects don't show, or another change), the server's news (a feed moved; the
    /// engine connected to it, or lost it), or its clock.
    private enum Wake: Sendable {
        case deletion, change, listening, notListening, tick
        /// The server's news, heard then: news heard before a sync began is in it.
        case feedMoved(Date)
    }

    /// Listens to the server's news until cancelled, connecting again after a backoff each
    /// time the connection can't be made or drops.
    private func listen(to live: any LiveSyncTransport, _ wake: AsyncStream<Wake>.Continuation) async {
        var failures = 0
        while !Task.isCancelled {
            do {
                let typeNames = try types.map { try $0.typeName(garage) }
                let moves = try await live.feedMoves(typeNames: typeNames)
                failures = 0
                update { $0.isListening = true }
                wake.yield(.listening)
                for try await _ in moves { wake.yield(.feedMoved(Date())) }
            } catch {
                // Dropped, or refused: polling goes on meanwhile.
            }
            update { $0.isListening = false }
            if Task.isCancelled { return }
            wake.yield(.notListening)
            failures += 1
            let delay = min(configuration.maximumBackoff, pow(2, Double(failures - 1)))
            try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
        }
    }

    /// ``run()``'s loop: it sleeps until a change, or until the next moment it has something
    /// to do (the end of a debounce, a poll, a retry), for which a timer wakes it.
    private func loop(_ wakes: AsyncStream<Wake>, _ wake: AsyncStream<Wake>.Continuation) async {
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        var failures = 0
        var due: Date? = Date()                 // a sync is due from then
        var lastChange: Date?
        var sawDeletion = false
        var nextPoll: Date?
        var isListening = false
        var lastStart: Date?                    // when the last sync began
        var notBefore: Date?                    // the wait a busy server asked for ends then
        wake.yield(.tick)                       // the first sync, at once
        for await event in wakes {
            if Task.isCancelled { return }
            let now = Date()
            switch event {
            case .change: lastChange = now
            case .deletion:
                lastChange = now
                sawDeletion = true
            case .feedMoved(let heard):
                // News heard before the last sync began is in it: one download for a burst.
                if lastStart.map({ heard >= $0 }) ?? true { due = min(due ?? .distantFuture, now) }
            case .listening:
                // What moved while the engine was not listening: a download at once.
                isListening = true
                nextPoll = nil
                due = min(due ?? .distantFuture, now)
            case .notListening:
                isListening = false
                nextPoll = configuration.pollInterval.map { now.addingTimeInterval($0) }
            case .tick:
                break
            }
            if let last = lastChange, now.timeIntervalSince(last) >= configuration.debounce {
                lastChange = nil
                // The engine's own downloads are changes too: a sync only when there is
                // something to upload.
                var needed = sawDeletion
                if !needed { needed = (try? await hasChanges()) ?? true }
                if needed { due = min(due ?? .distantFuture, now) }
                sawDeletion = false
            }
            if let poll = nextPoll, now >= poll { due = min(due ?? .distantFuture, now) }
            // Nothing (a change, the server's news) syncs before the wait a busy server asked for.
            if let wait = notBefore, let start = due, start < wait { due = wait }
            if let start = due, now >= start {
                due = nil
                lastStart = Date()
                do {
                    let report = try await sync()
                    failures = 0
                    notBefore = nil
                    nextPoll = isListening ? nil : configuration.pollInterval.map { Date().addingTimeInterval($0) }
                    // A refused object is tried again once its wait is over.
                    if !report.refused.isEmpty { due = Date().addingTimeInterval(configuration.retryAfter) }
                } catch {
                    if Task.isCancelled { return }
                    nextPoll = nil                  // the retry below downloads too
                    let retry: Date
                    if let busy = error as? SyncServerBusy {
                        // The server's wait, not the engine's backoff: it knows its load.
                        retry = Date().addingTimeInterval(max(0, busy.retryAfter))
                        notBefore = retry
                    } else {
                        failures += 1
                        retry = Date().addingTimeInterval(min(configuration.maximumBackoff, pow(2, Double(failures - 1))))
                    }
                    due = retry
                    update { $0.retryDate = retry }
                }
            }
            // Sleeps until the next deadline, or a change.
            timer?.cancel()
            timer = nil
            let deadlines = [lastChange.map { $0.addingTimeInterval(configuration.debounce) }, due, nextPoll]
            if let next = deadlines.compactMap({ $0 }).min() {
                timer = Task {
                    let delay = next.timeIntervalSinceNow
                    if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000)) }
                    if !Task.isCancelled { wake.yield(.tick) }
                }
            }
        }
    }

    /// Whether a registered type has changes to upload (a change observed may be the
    /// engine's own download).
    private func hasChanges() async throws -> Bool {
        for type in types where try await type.pending(garage) > 0 { return true }
        return false
    }
}
