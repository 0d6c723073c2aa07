/// What a park left unwritten: the children that ``ChildParking/keepStored`` or
/// ``ChildParking/onlyNew`` left as stored although the parked copy differs from them.
///
/// ```swift
/// let report = try garage.park(&notebook, children: .keepStored)
/// for child in report.keptChildren {
///     // The stored version won: re-apply this screen's edit of `child` to it, and park it.
/// }
/// ```
///
/// A child the option kept is one whose row changed since the parent was retrieved (a sync
/// job's download, another screen); what the parked copy held for it is not written. The
/// report names each such child, so that an edit made to it is never dropped unseen.
public struct ParkReport: Sendable, Hashable {
    /// The children left as stored whose parked copy differs from the stored one, in key
    /// order (for an encrypted store, every child left as stored: ciphertexts can't be compared).
    public var keptChildren: [ObjectKey]

    /// Whether the park wrote every child it was given.
    public var wroteEverything: Bool { keptChildren.isEmpty }

    /// A report of a park that kept `keptChildren` as stored.
    public init(keptChildren: [ObjectKey] = []) {
        self.keptChildren = keptChildren
    }
}
