import Foundation
import GarageLiteCore

// Locks between the garages of a store (and their processes), kept as store facts
// (`garage_meta`): a sync engine's download of a type, which two engines must not make at once
// (an older page applied after a newer one would undo it, and move the cursor back).
extension Store {
    /// Takes the lock `name` for `owner` (a ``ClaimOwner`` claim text) at `date`: when no one
    /// holds it, when its holder took it before `staleBefore` (a lease its holder renews by
    /// taking it again), or when its holder's process ended; renews it when `owner` holds it.
    /// Returns whether `owner` holds it now.
    func takingLock(_ name: String, owner: String, at date: Date, staleBefore: Date) -> StoreWork<Bool> {
        StoreWork(operation: "take the lock \(name)", access: .write { statements in
            try Store.transaction(statements) {
                let current = try statements.metadata(name)
                if let current, let held = Self.lockHolder(current), held.owner != owner, held.date >= staleBefore,
                   !(ClaimOwner(claimText: held.owner)?.hasEnded ?? false) {
                    return false
                }
                return try statements.replaceMetadata(name, previous: current, with: "\(date.timeIntervalSince1970) \(owner)")
            }
        }, isCancellable: false)
    }

    /// Gives the lock `name` back, if `owner` holds it.
    func releasingLock(_ name: String, owner: String) -> StoreWork<Void> {
        StoreWork(operation: "release the lock \(name)", access: .write { statements in
            try Store.transaction(statements) {
                guard let current = try statements.metadata(name), Self.lockHolder(current)?.owner == owner else { return }
                try statements.replaceMetadata(name, previous: current, with: nil)
            }
        }, isCancellable: false)
    }

    /// Who holds a lock, and since when: its value is "seconds-since-1970 owner".
    private static func lockHolder(_ value: String) -> (owner: String, date: Date)? {
        guard let space = value.firstIndex(of: " "), let seconds = Double(value[..<space]) else { return nil }
        return (String(value[value.index(after: space)...]), Date(timeIntervalSince1970: seconds))
    }
}
