import Foundation
import GarageLiteCore
import GarageLiteSQLite

/// The revisions copies get from changes that are not saved yet (autosave off, or a
/// transaction): provisional, negative numbers no row ever has, unique in the process.
///
/// A change recorded unsaved can't know the revision its row will have once saved, and a guess
/// (the stored revision plus one) is the number another writer's next commit gets too: a copy
/// holding it, whose change was then discarded or rolled back, would pass the stale check
/// against that writer's version and overwrite it. So a copy holds a provisional revision; the
/// save that writes the change *settles* it (records the row's real revision), and a copy
/// parked later is checked with that. One whose change was never saved keeps a number no row
/// has, and is refused as stale.
enum ProvisionalRevisions {
    private struct State {
        var next: Int64 = -1
        var settled: [Int64: Int64] = [:]
        /// Settled numbers, oldest first, so that the map stays bounded.
        var order: [Int64] = []
    }

    private static let state = Protected(State())
    /// How many settled revisions are remembered: a copy older than that is refused as stale,
    /// the safe direction.
    static let capacity = 100_000

    /// A new provisional revision.
    static func make() -> Int64 {
        state.write { state in
            defer { state.next -= 1 }
            return state.next
        }
    }

    /// Records that the change that handed out `provisional` was saved, its row at `revision`.
    static func settle(_ pairs: [(provisional: Int64, revision: Int64)]) {
        guard !pairs.isEmpty else { return }
        state.write { state in
            for (provisional, revision) in pairs {
                state.settled[provisional] = revision
                state.order.append(provisional)
            }
            if state.order.count > capacity {
                let excess = state.order.count - capacity
                for old in state.order.prefix(excess) { state.settled[old] = nil }
                state.order.removeFirst(excess)
            }
        }
    }

    /// The revision a copy's `revision` stands for: a provisional one that was saved is the
    /// row's revision it got; any other is itself.
    static func resolve(_ revision: Int64?) -> Int64? {
        guard let revision, revision < 0 else { return revision }
        return state.read { $0.settled[revision] } ?? revision
    }
}

extension ChangeSet {
    /// Gives the park of the row `key` (in the last segment that changes it) the provisional
    /// revision `provisional`.
    mutating func setProvisional(_ provisional: Int64, for key: ObjectKey) {
        guard let index = segments.lastIndex(where: { $0.rows[key] != nil }) else { return }
        updateRow(key, inSegment: index) { change in
            switch change {
            case .park(var payload):
                payload.provisional = provisional
                change = .park(payload)
            case .replace(var payload):
                payload.provisional = provisional
                change = .replace(payload)
            case .delete, .setSyncStatus:
                break
            }
        }
    }

    /// The provisional revisions these changes leave their rows at, with the rows: what a save
    /// settles. Only a row's last change counts: a provisional revision a later change of the
    /// row replaced (a park in a later segment, or after a bulk change) is never settled, so a
    /// copy that holds it stays stale.
    var provisionals: [(key: ObjectKey, provisional: Int64)] {
        var result: [(key: ObjectKey, provisional: Int64)] = []
        var decided = Set<ObjectKey>()
        // The bulk changes after the segment being read: each replaces the parks of its types.
        var laterBulks: [BulkChange] = []
        for segment in segments.reversed() {
            for (key, change) in segment.rows
            where !decided.contains(key) && !laterBulks.contains(where: { $0.affects(type: key.typeName) }) {
                switch change {
                case .park(let payload), .replace(let payload):
                    decided.insert(key)
                    if let provisional = payload.provisional { result.append((key, provisional)) }
                case .delete:
                    decided.insert(key)
                case .setSyncStatus:
                    break // it keeps the content, and the revision, of the park before it
                }
            }
            if let bulk = segment.bulk { laterBulks.append(bulk) }
        }
        return result
    }
}
