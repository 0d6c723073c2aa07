import Foundation
import GarageLiteCore

/// What deleting an object does to the objects that reference it (its referrers), as Core
/// Data's delete rules do.
///
/// An object that another object references is stored once, as its own row, with its
/// identifier in the referrer's JSON. Deleting its row alone leaves that identifier behind: the
/// referrer no longer reads ("Missing Identifiable reference") where the property is not
/// optional, and silently loses the object where it is. A rule says what to do instead:
///
/// ```swift
/// try garage.delete(note)                                      // .deny, the default: throws
/// try garage.delete(note, rule: .nullify(in: Notebook.self))   // notebooks drop the note
/// try garage.delete(note, rule: .rowOnly)                       // GarageStorage's delete
/// ```
///
/// The rule applies to ``Garage/delete(_:rule:)-3d3et``, ``Garage/delete(_:identifier:rule:)-14x5x``
/// and ``Garage/deleteAll(_:rule:)-12z6z``; the calls without a rule use the garage's
/// ``Garage/deleteRule``. The referrers are found through the store's index of references,
/// without reading the table, and the rule is applied in the transaction that deletes.
public struct DeleteRule: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case rowOnly
        case deny
        case nullify([ReferrerType])
    }

    let kind: Kind

    /// Refuses to delete an object that other objects reference: the delete throws
    /// ``GarageError/deleteDenied(typeName:identifier:referrers:)`` naming them, and deletes
    /// nothing. The default.
    public static let deny = DeleteRule(kind: .deny)

    /// Deletes the object's row only, leaving the references to it in its referrers, as
    /// GarageStorage does: a referrer then reads its reference as `nil` where it is optional,
    /// and fails to read (`DecodingError.dataCorrupted`, "Missing Identifiable reference")
    /// where it is not, until it is parked again without it. When the object may be on the
    /// server, its tombstone remembers the deletion, and the referrer reads as if the reference
    /// had been removed (an array, set or dictionary leaves it out, a required property reads
    /// the version deleted; see <doc:ReferenceRule>). ``Garage/check(maximumProblems:)-3x71a``
    /// lists such references.
    public static let rowOnly = DeleteRule(kind: .rowOnly)

    /// Removes the references to the object from its referrers, in the transaction that
    /// deletes it: an optional property that holds it is left out (it reads as `nil`), and an
    /// array or dictionary entry that holds it is dropped.
    ///
    /// ```swift
    /// try garage.delete(note, rule: .nullify(in: Notebook.self, Tag.self))
    /// ```
    ///
    /// Each referrer is read with its Swift type, which `types` must include, and written
    /// again: its revision changes (a ``Revisioned`` copy of it that the app holds is stale),
    /// and a ``Syncable`` one that was `.synced` becomes `.notSynced`, so that a sync job
    /// uploads it. The delete throws ``GarageError/cannotNullify(typeName:identifier:referrer:reason:)``,
    /// and changes nothing, when a referrer's type is not in `types`, when it can't do without
    /// the object (a property that is not optional holds it), or when it is identified by its
    /// content (`Hashable`, not `Identifiable`), which the change would change.
    public static func nullify(in types: any (Codable & SendableMetatype).Type...) -> DeleteRule {
        DeleteRule(kind: .nullify(types.map { ReferrerType($0) }))
    }

    /// `deny`, `rowOnly`, or `nullify(in: [types])`.
    public var description: String {
        switch kind {
        case .deny: return "deny"
        case .rowOnly: return "rowOnly"
        case .nullify(let types): return "nullify(in: [\(types.map(\.swiftName).joined(separator: ", "))])"
        }
    }

    /// The changes that deleting objects makes to their referrers, before the deletion itself:
    /// none, or the referrers without the references `omits` names; throws to refuse the
    /// deletion. `references` are the (referenced, referrer) pairs of the deleted objects,
    /// without those of referrers deleted with them.
    func referrerChanges(
        for references: [(to: ObjectKey, from: ObjectKey)], omitting omits: @escaping @Sendable (ObjectKey) -> Bool,
        in view: StoreView, configuration: Garage.Configuration
    ) throws -> ChangeSet {
        guard let first = references.first else { return ChangeSet() }
        switch kind {
        case .rowOnly:
            return ChangeSet()
        case .deny:
            throw GarageError.deleteDenied(typeName: first.to.typeName, identifier: first.to.identifier,
                                           referrers: references.filter { $0.to == first.to }.map(\.from))
        case .nullify(let types):
            var typesByName: [String: ReferrerType] = [:]
            for type in types { typesByName[try type.typeName()] = type }
            var changes = ChangeSet()
            var rewritten = Set<ObjectKey>()
            for (deleted, referrer) in references where rewritten.insert(referrer).inserted {
                func refuse(_ reason: String) -> GarageError {
                    .cannotNullify(typeName: deleted.typeName, identifier: deleted.identifier, referrer: referrer, reason: reason)
                }
                guard let type = typesByName[referrer.typeName] else {
                    throw refuse("no type of .nullify(in:) is stored as \"\(referrer.typeName)\": add \(referrer.typeName).self")
                }
                let row: StoredRow
                do {
                    guard let stored = try view.row(referrer) else { continue }
                    row = stored
                } catch let error as GarageError {
                    throw refuse("its row can't be read: \(error); repair or delete it first")
                }
                if let payload = try type.rewrite(row, omits, view, configuration, refuse) {
                    // Written later (unsaved, or in a transaction), the rewrite is made again
                    // over the referrer as it is then, if another writer changed it meanwhile.
                    let committed = view.pending?.touches(referrer) == true
                        ? try? view.statements.row(referrer, for: .metadata)?.revision : row.revision
                    let rebuild = RowRebuild { row, view, _ in
                        try type.rewrite(row, omits, view, configuration) { reason in
                            .cannotNullify(typeName: deleted.typeName, identifier: deleted.identifier,
                                           referrer: referrer, reason: reason)
                        }
                    }
                    changes.record(.park(payload), for: referrer,
                                   check: WriteCheck(revision: committed, parkedRevision: row.revision, rebuild: rebuild))
                }
            }
            return changes
        }
    }
}

extension ReferrerType {
    /// The property a decoding error is about, as a path (`cover.note`), when it names one.
    static func property(_ error: DecodingError) -> String? {
        let path: [any CodingKey]
        switch error {
        case let .keyNotFound(key, context): path = context.codingPath + [key]
        case let .valueNotFound(_, context), let .typeMismatch(_, context), let .dataCorrupted(context):
            path = context.codingPath
        @unknown default: return nil
        }
        let names = path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
        guard !names.isEmpty else { return nil }
        return names.reduce("") { $0.isEmpty || $1.hasPrefix("[") ? $0 + $1 : $0 + "." + $1 }
    }
}

/// A Swift type whose objects ``DeleteRule/nullify(in:)`` may rewrite: its objects are read,
/// and written again without the references to the deleted objects.
struct ReferrerType: Sendable {
    let swiftName: String
    let typeName: @Sendable () throws -> String
    /// The payload of `row` rewritten without the references `omits` names, or `nil` when it
    /// holds none; throws the error `refuse` makes of a reason when it can't be.
    let rewrite: @Sendable (
        _ row: StoredRow, _ omits: @escaping @Sendable (ObjectKey) -> Bool, _ view: StoreView,
        _ configuration: Garage.Configuration, _ refuse: (String) -> GarageError
    ) throws -> RowPayload?

    init<T: Codable & SendableMetatype>(_ type: T.Type) {
        swiftName = "\(Identity.displayName(T.self)).self"
        typeName = { try Identity.typeName(T.self) }
        rewrite = { row, omits, view, configuration, refuse in
            let key = row.key
            let object: T
            do {
                object = try configuration.decode(T.self, row, with: configuration.decoder(view))
            } catch {
                throw refuse("it can't be read as \(Identity.displayName(T.self)): \(error)")
            }
            let graph = configuration.encoder()
            graph.omits = omits
            let encoded = try graph.encodeAlone(object, as: key, isRoot: row.isRoot)
            // Its type encodes no reference to them: an imported object's stored list may name
            // objects it doesn't reference (see `GarageStorageImport`). It is left as it is.
            guard graph.omittedCount > 0 || encoded.references.contains(where: omits) else { return nil }
            guard Identity.isIdentifiable(T.self) else {
                throw refuse("it is identified by its content (it is Hashable, not Identifiable), which removing the "
                    + "reference would change; park it again without the reference, or delete it, first")
            }
            if encoded.references.contains(where: omits) {
                throw refuse("its encode(to:) writes the reference where it can't be left out (not as a property, "
                    + "an optional, an array element or a dictionary value)")
            }
            // Whether it reads without them. The objects it references are read as stored:
            // those that reference the deleted objects too are rewritten on their own.
            let check = configuration.decoder(view)
            do {
                _ = try check.decode(T.self, from: DecodableRow(
                    key: key, json: try JSONDocument(parsing: encoded.json).root, syncStatus: row.syncStatus, revision: row.revision))
            } catch let error as DecodingError {
                let property = Self.property(error).map { "its property `\($0)`" } ?? "a property that is not optional"
                throw refuse("\(property) can't do without it: make that property optional, or delete with rule .deny "
                    + "and change \(key) first")
            }
            return try configuration.encryption.seal(encoded).payload
        }
    }
}
