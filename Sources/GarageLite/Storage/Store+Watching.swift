import Foundation
import GarageLiteCore

// What the watch of other connections' commits reads (`Observation/CommitWatch.swift`): the
// stamps of the observed objects, and whether another connection committed since the last look.
extension Store {
    /// Whether other connections (other garages, other processes) can change the store, and
    /// the engine tells their commits (``WatchesOtherCommits``): observers then need a watch.
    var isShared: Bool { (engine as? any WatchesOtherCommits)?.isShared ?? false }

    /// The stamps of the objects of `typeName` (of those `identifiers` names, or all), read now.
    func stamps(ofType typeName: String, identifiers: [String]?) throws -> [String: RowStamp] {
        try run(StoreWork(operation: "observe \(typeName)", access: .read { statements in
            try statements.stamps(ofType: typeName, identifiers: identifiers)
        }))
    }

    /// Runs `look` on the writer's connection, between this garage's writes (never during
    /// one), on a read-only store too; returns once it ran. An error of the store is `look`'s to
    /// ignore: the watch looks again later.
    func lookingAtCommits(_ look: @escaping @Sendable (CommitLook) throws -> Void) async {
        guard let engine = engine as? any WatchesOtherCommits else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            engine.startWatch { connection in
                defer { continuation.resume() }
                guard let statements = try? connection.get() else { return }
                try? Store.$isAccessing.withValue(true) { try look(CommitLook(statements: statements)) }
            }
        }
    }

    /// What one look of the watch reads.
    struct CommitLook {
        fileprivate let statements: any CountsOtherCommits

        /// A number that changes when another connection commits, and never for this garage's
        /// own commits.
        func othersCommitCounter() throws -> Int { try statements.othersCommitCounter() }

        /// Runs `body` in one snapshot.
        func snapshot<T>(_ body: () throws -> T) throws -> T { try statements.snapshot(body) }

        /// The stamps of the objects of `typeName` (of those `identifiers` names, or all).
        func stamps(ofType typeName: String, identifiers: [String]?) throws -> [String: RowStamp] {
            try statements.stamps(ofType: typeName, identifiers: identifiers)
        }
    }
}
