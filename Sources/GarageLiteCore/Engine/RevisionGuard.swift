import Foundation

/// What a park checks against a row before writing it: the revision a ``Revisioned`` object
/// was retrieved at, and for a child, what its parent's park does with it (``ChildParking``).
///
/// The check runs on the store as the call sees it (committed rows and pending changes), in
/// the transaction that writes, so nothing can change the row in between.
package struct RevisionGuard: Sendable {
    /// The object's revision when it is ``Revisioned``; `nil` otherwise.
    package var revision: Int64?
    /// Whether the object was parked itself, rather than only referenced.
    package var isRoot: Bool
    package var children: ChildParking
    /// For a child: the revision at which the garage handed out this very JSON of it (a
    /// retrieve decoded it so), `nil` when it handed out no such version (the child is an edit,
    /// or was never read). A child unchanged since then, whose row moved on (another device's
    /// edit downloaded, another process's, another screen's), is not an edit: the park leaves
    /// the row as stored, whatever the object's type (``Revisioned`` or not, class or struct).
    package var handedOutRevision: Int64? = nil

    /// What to do with the row.
    package enum Decision {
        case write
        /// Leave the stored row as it is.
        case keep
    }

    /// Whether the decision needs the stored row: a ``Revisioned`` object's, or a child's
    /// with ``ChildParking/onlyNew``.
    package var needsStoredRevision: Bool {
        revision != nil || (!isRoot && (children == .onlyNew || handedOutRevision != nil))
    }

    /// Decides whether `key` is written over the stored row, whose revision is `stored`
    /// (`nil`: no row); throws ``GarageError/staleObject(typeName:identifier:parkedRevision:storedRevision:)``
    /// to refuse the park.
    package func decide(_ key: ObjectKey, stored: Int64?) throws -> Decision {
        func stale() -> GarageError {
            .staleObject(typeName: key.typeName, identifier: key.identifier,
                         parkedRevision: revision ?? 0, storedRevision: stored ?? 0)
        }
        /// A Revisioned object's revision is not its row's: changed or deleted since it was
        /// retrieved, or (revision 0) parked blind over a stored row.
        var isStale: Bool {
            guard let revision else { return false }
            return revision == 0 ? stored != nil : stored != revision
        }
        if isRoot {
            if isStale { throw stale() }
            return .write
        }
        // An unchanged child whose row moved on since the garage handed it out: not an edit.
        if children != .all, let handedOutRevision, let stored, stored != handedOutRevision {
            return .keep
        }
        switch children {
        case .all:
            return .write
        case .onlyNew:
            return stored == nil ? .write : .keep
        case .refuseStale:
            if isStale { throw stale() }
            return .write
        case .keepStored:
            guard isStale else { return .write }
            // Nothing stored to keep: the child was deleted since it was retrieved.
            if stored == nil { throw stale() }
            return .keep
        }
    }

    /// Makes one of the given values, each stored as given.
    package init(
        revision: Int64? = nil,
        isRoot: Bool,
        children: ChildParking,
        handedOutRevision: Int64? = nil
    ) {
        self.revision = revision
        self.isRoot = isRoot
        self.children = children
        self.handedOutRevision = handedOutRevision
    }
}
