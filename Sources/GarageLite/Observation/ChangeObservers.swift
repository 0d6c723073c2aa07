import Foundation

/// The observers of one garage, and the delivery of each commit's changes to them.
///
/// Changes are published right after their transaction commits, from the store's writer
/// (writes are serialised there), so every observer sees commits in order.
final class ChangeObservers: CommitListener {
    private struct Subscriber {
        var typeName: String
        var identifier: String?
        var continuation: AsyncStream<[GarageChange]>.Continuation
    }

    private let subscribers = Protected<[UUID: Subscriber]>([:])

    /// Whether anyone observes: if not, a writer need not collect what it wrote.
    var isListening: Bool { subscribers.read { !$0.isEmpty } }

    /// A stream of the changes to objects of `typeName` (to one object when `identifier` is
    /// set), one element per commit that made some.
    func subscribe(typeName: String, identifier: String? = nil) -> AsyncStream<[GarageChange]> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<[GarageChange]>.makeStream()
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.write { $0[id] = nil }
        }
        subscribers.write {
            $0[id] = Subscriber(typeName: typeName, identifier: identifier, continuation: continuation)
        }
        return stream
    }

    /// Publishes what a committed change set did.
    func committed(_ changes: ChangeSet) {
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
