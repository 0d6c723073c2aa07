import Foundation
import GarageLiteCore
import GarageLiteSQLite

/// Finds the commits that other garages and other processes make to a shared store, while
/// someone observes it, and tells ``ChangeObservers`` what they changed.
///
/// **How.** Every ``interval``, and at once when the engine hears of another connection's
/// commit (``WatchesOtherCommits/wakeOnOthersCommits(_:)``: PostgreSQL's notifications), on
/// the writer's connection and between this garage's writes, the watch reads SQLite's `data_version` (``RowWriteStatements/othersCommitCounter()``),
/// which changes when *another* connection commits and never for the writer's own commits.
/// When it changed, the watch reads the stamps (revision, modification date, sync status) of
/// the objects observed and compares them with those it holds: an object that appeared or
/// whose data changed was parked, one that went was deleted, one whose status alone changed
/// had its status changed. Objects this garage changed itself since the last look are told
/// by its own commits (``committedHere(_:)``), so they are only re-read, not told twice.
///
/// **Why this mechanism.** It costs nothing when nobody observes: no table to write on every
/// commit, no trigger, no file watch; writers do exactly what they did. While someone
/// observes, an idle store costs one `PRAGMA` per interval, and a commit made elsewhere one
/// read of the observed type's stamps (one row per object of the type, or per observed
/// identifier). A change log written by every commit would tell bulk changes apart and cost
/// every writer, observed or not; a file watch is not portable and fires for this garage's
/// own writes too.
///
/// **What differs from this garage's own commits.** Commits made elsewhere between two looks
/// arrive as one element; a `deleteAll` or `migrateAll` arrives as one change per object rather than one for
/// the type.
final class CommitWatch: Sendable {
    /// How often the watch looks: well under the 250 ms an observer may wait.
    static let interval: UInt64 = 50_000_000

    /// What the watch holds of one observed type.
    private struct TypeWatch {
        /// Whether every object of the type is observed, or only `identifiers`.
        var isWholeType = false
        var identifiers: Set<String> = []
        /// The stamps of the observed objects as last seen; an observed object without one
        /// does not exist.
        var stamps: [String: RowStamp] = [:]
        /// Whether stamps were taken since the last look: the next one compares, whatever
        /// the counter says (a commit may have landed between the two).
        var isNew = true
        /// Changes with what is observed, so that a look writes back only what it read.
        var generation = 0
        /// Whether the stamps of a subscription could not be read: the next look takes the
        /// type's stamps as they are, telling nothing (rare: a subscription from inside a
        /// database access, or a read that failed).
        var adoptsNextStamps = false

        func observes(_ identifier: String) -> Bool {
            isWholeType || identifiers.contains(identifier)
        }
    }

    private struct State {
        var types: [String: TypeWatch] = [:]
        /// The other connections' commit counter at the last look.
        var counter: Int?
        /// The observed objects this garage changed since the last look, by type name: `nil`
        /// for a whole type.
        var changedHere: [String: Set<String>?] = [:]
        var isStopped = false
    }

    private let state = Protected(State())
    private let looking: Task<Void, Never>
    /// Ends the pause between two looks when the engine hears of another commit.
    private let wakeup = Wakeup()
    private let stopsWaking: @Sendable () -> Void

    init(store: Store, observers: ChangeObservers) {
        let state = state
        let wakeup = wakeup
        if let engine = store.engine as? any WatchesOtherCommits {
            stopsWaking = engine.wakeOnOthersCommits { wakeup.wake() }
        } else {
            stopsWaking = {}
        }
        looking = Task.detached(priority: .utility) { [weak store, weak observers] in
            while !Task.isCancelled {
                await wakeup.wait(nanoseconds: Self.interval)
                guard let store, let observers, !Task.isCancelled else { return }
                await Self.look(store: store, state: state, observers: observers)
            }
        }
    }

    /// Stops looking.
    func stop() {
        state.write { $0.isStopped = true }
        stopsWaking()
        looking.cancel()
        wakeup.wake()
    }

    // MARK: - What is observed

    /// Watches the objects of `typeName` (one of them, when `identifier` is set) from now on.
    ///
    /// Their stamps are read at once, so that a commit made elsewhere after the subscription
    /// is told even if it lands before the next look. The read holds the watch's state (a
    /// look waits for it to write back what it found, never the other way round): no look
    /// can take the new stamps for changes.
    func observe(typeName: String, identifier: String?, store: Store) {
        state.write { state in
            var watch = state.types[typeName] ?? TypeWatch()
            if watch.isWholeType || identifier.map(watch.identifiers.contains) == true { return }
            let before = watch
            if let identifier { watch.identifiers.insert(identifier) } else { watch.isWholeType = true }
            watch.generation += 1
            watch.isNew = true
            // Inside a database access (a decoder that subscribes), the next look takes the
            // stamps instead, and tells nothing it finds in them.
            if !Store.isAccessing, let stamps = try? store.stamps(ofType: typeName, identifiers: identifier.map { [$0] }) {
                // A stamp held already is older: kept, so that a change it has not told is told.
                for (identifier, stamp) in stamps where !before.observes(identifier) {
                    watch.stamps[identifier] = stamp
                }
            } else {
                watch.adoptsNextStamps = true
            }
            state.types[typeName] = watch
        }
    }

    /// Watches only what `subscribers` observe.
    func keepWatching(_ subscribers: [(typeName: String, identifier: String?)]) {
        state.write { state in
            var kept: [String: TypeWatch] = [:]
            for (typeName, identifier) in subscribers {
                guard var watch = kept[typeName] ?? state.types[typeName].map({ old -> TypeWatch in
                    var narrowed = old
                    narrowed.isWholeType = false
                    narrowed.identifiers = []
                    narrowed.generation += 1
                    return narrowed
                }) else { continue }
                if let identifier { watch.identifiers.insert(identifier) } else { watch.isWholeType = true }
                kept[typeName] = watch
            }
            for (typeName, var watch) in kept where !watch.isWholeType {
                watch.stamps = watch.stamps.filter { watch.identifiers.contains($0.key) }
                kept[typeName] = watch
            }
            state.types = kept
        }
    }

    // MARK: - Commits

    /// Notes the observed objects a commit of this garage changed (on the writer, after it):
    /// the next look reads their stamps again without telling them.
    func committedHere(_ changes: ChangeSet) {
        state.write { state in
            for segment in changes.segments {
                if let bulk = segment.bulk {
                    for typeName in state.types.keys where bulk.affects(type: typeName) {
                        state.changedHere[typeName] = .some(nil)
                    }
                }
                for key in segment.rows.keys where state.types[key.typeName] != nil {
                    if case .some(.some(var identifiers)) = state.changedHere[key.typeName] {
                        identifiers.insert(key.identifier)
                        state.changedHere[key.typeName] = identifiers
                    } else if state.changedHere[key.typeName] == nil {
                        state.changedHere[key.typeName] = [key.identifier]
                    }
                }
            }
        }
    }

    // MARK: - Looking

    private static func look(store: Store, state: Protected<State>, observers: ChangeObservers) async {
        await store.lookingAtCommits { statements in
            // A failed look changes nothing: the next one compares with the same stamps.
            let found = try look(statements, state: state)
            if !found.isEmpty { observers.committedElsewhere(found) }
        }
    }

    /// Compares the observed objects with their stamps when another connection committed,
    /// and re-reads those this garage changed; returns the changes made elsewhere. Runs on the
    /// writer, between the garage's writes (and their ``committedHere(_:)``).
    private static func look(_ statements: Store.CommitLook, state: Protected<State>) throws -> [String: [GarageChange]] {
        let counter = try statements.othersCommitCounter()
        let (types, changedHere, lastCounter, isStopped) = state.read {
            ($0.types, $0.changedHere, $0.counter, $0.isStopped)
        }
        guard !isStopped else { return [:] }
        let committedElsewhere = counter != lastCounter
        var found: [String: [GarageChange]] = [:]
        var read: [String: [String: RowStamp]] = [:]
        try statements.snapshot {
            for (typeName, watch) in types {
                let here = changedHere[typeName]
                guard committedElsewhere || watch.isNew || here != nil else { continue }
                let current = try statements.stamps(
                    ofType: typeName, identifiers: watch.isWholeType ? nil : Array(watch.identifiers))
                read[typeName] = current
                // Compared whatever the counter says: what this look reads replaces the stamps
                // held, so a commit made elsewhere that it reads must be told now, or never.
                // The counter may not have moved for it yet (a notification on its way; a
                // commit between reading the counter and this snapshot), and an object this
                // garage did not change can only have changed elsewhere.
                guard !watch.adoptsNextStamps else { continue }
                let changes = differences(from: watch.stamps, to: current, typeName: typeName, skipping: here)
                if !changes.isEmpty { found[typeName] = changes }
            }
        }
        state.write { state in
            state.counter = counter
            for (typeName, current) in read {
                state.changedHere[typeName] = nil
                guard var watch = state.types[typeName], let old = types[typeName] else { continue }
                // What this look read replaces what it compared with; what a subscription
                // added since keeps the stamps it took.
                for identifier in Set(old.stamps.keys).union(current.keys) where old.observes(identifier) {
                    watch.stamps[identifier] = current[identifier]
                }
                if watch.generation == old.generation {
                    watch.isNew = false
                    watch.adoptsNextStamps = false
                }
                state.types[typeName] = watch
            }
        }
        return found
    }

    /// The changes between two sets of stamps of `typeName`, but those of `skipping` (every
    /// one when it holds `nil`).
    private static func differences(
        from old: [String: RowStamp], to new: [String: RowStamp], typeName: String, skipping: Set<String>??
    ) -> [GarageChange] {
        if case .some(nil) = skipping { return [] }
        let skipped = skipping.flatMap { $0 } ?? []
        var changes: [GarageChange] = []
        for identifier in Set(old.keys).union(new.keys).sorted() where !skipped.contains(identifier) {
            let kind: GarageChange.Kind
            switch (old[identifier], new[identifier]) {
            case (nil, _?): kind = .parked
            case (_?, nil): kind = .deleted
            case let (before?, after?) where before.revision != after.revision
                || before.modificationDate != after.modificationDate: kind = .parked
            case let (before?, after?) where before.syncStatus != after.syncStatus: kind = .syncStatusChanged
            default: continue
            }
            changes.append(GarageChange(typeName: typeName, identifier: identifier, kind: kind))
        }
        return changes
    }
}
