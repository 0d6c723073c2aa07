import Foundation
import GarageLiteCore

/// The observers of one garage, and the delivery of each commit's changes to them: this
/// garage's own commits as they happen, and those of other garages and other processes on the
/// same file as its ``CommitWatch`` finds them.
///
/// Both are told on the store's writer, where this garage's writes are serialized and the
/// watch runs between them, so every observer sees commits in order.
final class ChangeObservers: CommitListener {
    private struct Subscriber {
        var typeName: String
        var identifier: String?
        var continuation: AsyncStream<[GarageChange]>.Continuation
    }

    private let subscribers = Protected<[UUID: Subscriber]>([:])
    /// The watch of other connections' commits, while someone observes a shared store.
    private let watch = Protected<CommitWatch?>(nil)

    /// Whether anyone observes: if not, a writer need not collect what it wrote.
    var isListening: Bool { subscribers.read { !$0.isEmpty } }

    /// A stream of the changes to objects of `typeName` (to one object when `identifier` is
    /// set), one element per commit that made some; with the commits of other connections to
    /// `store` when it is shared.
    func subscribe(typeName: String, identifier: String? = nil, store: Store) -> AsyncStream<[GarageChange]> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<[GarageChange]>.makeStream()
        continuation.onTermination = { [weak self] _ in
            self?.unsubscribe(id)
        }
        subscribers.write {
            $0[id] = Subscriber(typeName: typeName, identifier: identifier, continuation: continuation)
        }
        if store.isShared {
            let watch = watch.write { watch in
                if watch == nil { watch = CommitWatch(store: store, observers: self) }
                return watch
            }
            watch?.observe(typeName: typeName, identifier: identifier, store: store)
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        let remaining = subscribers.write { subscribers in
            subscribers[id] = nil
            return subscribers.values.map { (typeName: $0.typeName, identifier: $0.identifier) }
        }
        let stopped: CommitWatch? = watch.write { watch in
            guard remaining.isEmpty else { return nil }
            defer { watch = nil }
            return watch
        }
        if let stopped {
            stopped.stop()
        } else {
            watch.read { $0 }?.keepWatching(remaining)
        }
    }

    /// Publishes what a committed change set of this garage did.
    func committed(_ changes: ChangeSet) {
        watch.read { $0 }?.committedHere(changes)
        deliver { typeName, identifier in
            var result: [GarageChange] = []
            for segment in changes.segments {
                switch segment.bulk {
                case .deleteAll(let type)? where type == nil || type == typeName:
                    result.append(GarageChange(typeName: typeName, identifier: nil, kind: .deleted))
                case .renameType(let from, _)? where from == typeName:
                    result.append(GarageChange(typeName: typeName, identifier: nil, kind: .deleted))
                case .renameType(_, let to)? where to == typeName:
                    result.append(GarageChange(typeName: typeName, identifier: nil, kind: .parked))
                default:
                    break
                }
                if let identifier {
                    if let change = segment.rows[ObjectKey(typeName: typeName, identifier: identifier)] {
                        result.append(GarageChange(typeName: typeName, identifier: identifier, kind: change.observedKind))
                    }
                } else {
                    for (key, change) in segment.rows where key.typeName == typeName {
                        result.append(GarageChange(typeName: typeName, identifier: key.identifier, kind: change.observedKind))
                    }
                }
            }
            return result
        }
    }

    /// Publishes the changes another connection committed: `changes` by type name.
    func committedElsewhere(_ changes: [String: [GarageChange]]) {
        deliver { typeName, identifier in
            guard let changes = changes[typeName] else { return [] }
            return identifier.map { identifier in changes.filter { $0.identifier == identifier } } ?? changes
        }
    }

    private func deliver(_ changesFor: (String, String?) -> [GarageChange]) {
        let current = subscribers.read { $0 }
        guard !current.isEmpty else { return }
        for subscriber in current.values {
            let changes = changesFor(subscriber.typeName, subscriber.identifier)
            if !changes.isEmpty {
                subscriber.continuation.yield(changes)
            }
        }
    }
}

extension RowChange {
    var observedKind: GarageChange.Kind {
        switch self {
        case .park, .replace: return .parked
        case .delete: return .deleted
        case .setSyncStatus: return .syncStatusChanged
        }
    }
}
