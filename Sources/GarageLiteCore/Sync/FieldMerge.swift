import Foundation

/// What a field-level merge keeps of a property that both sides changed.
public enum FieldConflictPolicy: Sendable {
    /// The write that reaches the server last wins: the local edit, which the sync job uploads after the version downloaded. The default.
    case lastWriterWins
    /// The server's value wins.
    case serverWins
    /// The closure picks, per property path (coding keys, outermost first, e.g. ["address", "city"]).
    case choose(@Sendable (_ path: [String]) -> FieldConflictSide)

    /// The side whose value the property at `path` keeps.
    package func winner(at path: [String]) -> FieldConflictSide {
        switch self {
        case .lastWriterWins: return .local
        case .serverWins: return .downloaded
        case .choose(let pick): return pick(path)
        }
    }
}

/// One side of a field-level merge: the side whose value a property both sides changed keeps
/// (see ``FieldConflictPolicy/choose(_:)``).
public enum FieldConflictSide: Sendable, Hashable {
    /// This device's edit.
    case local
    /// The server's version.
    case downloaded
}

/// A three-way merge of an object edited on both sides: this device's edit (`local`), the
/// server's version (`downloaded`), and the last content both agreed on (`base`, nil when
/// unknown).
///
/// ``SyncMerge/fields(bothChanged:)`` merges property by property: a property only one side changed
/// takes that side's value, a nested struct both sides changed is merged the same way, and
/// a property both sides changed to different values follows the ``FieldConflictPolicy``.
/// Arrays and other values are never merged element by element: they are one property.
///
/// ```swift
/// struct Contact: Codable {
///     var name: String
///     var phone: String?
///     var tags: [String]
/// }
///
/// let merge = SyncMerge<Contact>.fields(bothChanged: .serverWins)
/// let (merged, discarded) = try merge.merge(base: lastSynced, local: mine, downloaded: theirs)
/// // merged: each side's own changes; where both changed a property, the server's value.
/// // discarded: the properties whose local change was dropped, e.g. ["phone"].
/// ```
///
/// The objects go through Foundation's `JSONEncoder` (with sorted keys) and `JSONDecoder`,
/// otherwise with their default settings: properties are their coding keys, an optional set
/// to nil is a property removed. An object that does not encode as a keyed container is one
/// property, at the path `""`. The paths of `discarded` are in the merged document's order:
/// at each level, the local version's properties by coding key, then those only the
/// downloaded version has.
public struct SyncMerge<Object>: Sendable {
    /// Merges the base (nil when unknown), the local and the downloaded version: the merged
    /// object, and the paths of the changes the merge dropped.
    package let body: @Sendable (Object?, Object, Object) throws -> (Object, [String])

    /// Merges `local` and `downloaded` property by property (the rules above).
    ///
    /// At each property: when one side holds the base's value, the other side's is taken;
    /// when both hold the same value, it is taken; otherwise both changed it. Two objects
    /// (nested structs) both changed are merged property by property, anything else follows
    /// `policy`. A property one side removed (an optional set to nil) counts as a change of
    /// that side. Without a base every property the two sides differ on is changed by both.
    ///
    /// `Object` is `SendableMetatype`, as for `parkDownloaded`: the merge is `Sendable` and
    /// encodes and decodes on whatever thread runs it, so the type's `Codable` conformance must
    /// not be isolated to an actor.
    public static func fields(bothChanged policy: FieldConflictPolicy = .lastWriterWins) -> SyncMerge
    where Object: Codable & SendableMetatype {
        SyncMerge { base, local, downloaded in
            // Sorted keys: `JSONEncoder` writes a keyed container's members in no fixed order
            // (it differs between runs), and the document's order is the order of `discarded`.
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let baseJSON = try base.map { try JSONReader.parse(encoder.encode($0)) }
            let localJSON = try JSONReader.parse(encoder.encode(local))
            let downloadedJSON = try JSONReader.parse(encoder.encode(downloaded))
            var merger = FieldMerger(policy: policy)
            let merged = merger.merge(
                base: baseJSON.map { .present($0) },
                local: .present(localJSON),
                downloaded: .present(downloadedJSON),
                path: []
            )
            guard case .present(let value) = merged else {
                // Both sides are present: a merge of two present values is present.
                preconditionFailure("a field merge removed the whole object")
            }
            let object = try JSONDecoder().decode(Object.self, from: Data(JSONWriter.bytes(from: value)))
            return (object, merger.discarded)
        }
    }

    /// A merge the app writes: gets the base (nil when unknown), the local and the downloaded version.
    public static func custom(_ merge: @escaping @Sendable (_ base: Object?, _ local: Object, _ downloaded: Object) throws -> Object) -> SyncMerge {
        SyncMerge { base, local, downloaded in
            (try merge(base, local, downloaded), [])
        }
    }

    /// Runs the merge: the merged object, and the paths (joined with ".") of the properties whose local or downloaded change was dropped by the policy (empty for `custom`).
    public func merge(base: Object?, local: Object, downloaded: Object) throws -> (object: Object, discarded: [String]) {
        try body(base, local, downloaded)
    }
}

/// The value of a property on one side of a merge: a JSON value, or no member at all (the
/// side removed it, or never had it), which differs from `null`.
private enum FieldSlot: Equatable {
    case absent
    case present(JSONValue)

    /// The members, when the value is a JSON object.
    var members: [JSONMember]? {
        if case .present(.object(let members)) = self { return members }
        return nil
    }
}

/// The work of ``SyncMerge/fields(bothChanged:)`` on JSON: merges the three values and
/// records the paths where the policy dropped a side's value, in the merged document's order.
private struct FieldMerger {
    let policy: FieldConflictPolicy
    /// The dropped changes' paths, joined with ".".
    var discarded: [String] = []

    init(policy: FieldConflictPolicy) {
        self.policy = policy
    }

    /// The merge of one property; a nil `base` is unknown, so that every difference is a
    /// change of both sides.
    mutating func merge(base: FieldSlot?, local: FieldSlot, downloaded: FieldSlot, path: [String]) -> FieldSlot {
        if let base, local == base { return downloaded }
        if let base, downloaded == base { return local }
        if local == downloaded { return local }
        if let localMembers = local.members, let downloadedMembers = downloaded.members {
            let merged = mergeMembers(
                base: base?.members,
                local: localMembers,
                downloaded: downloadedMembers,
                path: path
            )
            return .present(.object(merged))
        }
        // Both changed a leaf, to different values (they are not equal here).
        discarded.append(path.joined(separator: "."))
        switch policy.winner(at: path) {
        case .local: return local
        case .downloaded: return downloaded
        }
    }

    /// The merge of two objects' members: local's order, then the members only downloaded has.
    /// A member absent from the result (removed, or changed to absent by the policy) is left out.
    private mutating func mergeMembers(
        base: [JSONMember]?, local: [JSONMember], downloaded: [JSONMember], path: [String]
    ) -> [JSONMember] {
        let baseLookup = base.map(MemberLookup.init)
        let localLookup = MemberLookup(local)
        let downloadedLookup = MemberLookup(downloaded)
        var keys: [String] = []
        var seen: Set<String> = []
        for member in local + downloaded where seen.insert(member.key).inserted {
            keys.append(member.key)
        }
        var merged: [JSONMember] = []
        merged.reserveCapacity(keys.count)
        for key in keys {
            let result = merge(
                base: baseLookup.map { Self.slot($0[key]) },
                local: Self.slot(localLookup[key]),
                downloaded: Self.slot(downloadedLookup[key]),
                path: path + [key]
            )
            if case .present(let value) = result {
                merged.append(JSONMember(key: key, value: value))
            }
        }
        return merged
    }

    private static func slot(_ value: JSONValue?) -> FieldSlot {
        value.map { .present($0) } ?? .absent
    }
}
