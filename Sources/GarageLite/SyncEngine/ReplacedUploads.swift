import Foundation
import GarageLiteCore

/// An edit this device uploaded whose changes a later version from the server holds otherwise:
/// another device changed the same properties after it, or, in a conflict this device lost,
/// another device's merge kept its own values (that device's report names them too, as
/// ``DownloadConflict/discardedFields``). Either way, what this device's user changed is no
/// longer what the object says, and the app may want to show it.
///
/// ```swift
/// let report = try await engine.sync()
/// for replaced in report.replaced {
///     show("\(replaced.object): your change of \(replaced.fields) was replaced")
/// }
/// ```
///
/// Only what this device's last upload of the object changed counts (the properties that
/// differ from the version its edit started from; every property of an object it created): a
/// later version that changes other properties replaces nothing of it. Each upload is named
/// once, by the first download that changes what it changed. The engine keeps what it uploaded
/// in the store's settings, for the ``ReplacedUpload/remembered`` objects of a type it uploaded
/// last.
public struct ReplacedUpload: Sendable, Hashable, CustomStringConvertible {
    /// How many uploaded objects of a type the engine remembers (the oldest uploads are
    /// forgotten first): a bound on the setting it rewrites with each upload.
    public static let remembered = 1_000

    /// The object's type name and identifier.
    public var object: ObjectKey
    /// The server's version of this device's upload.
    public var uploadedVersion: String?
    /// The server's version that replaced it.
    public var version: String?
    /// The properties this device's upload changed that the server's version holds otherwise,
    /// as coding-key paths ("title", "address.city"); every one it changed when the server
    /// deleted the object.
    public var fields: [String]
    /// Whether the server's version is a deletion.
    public var isDeletion: Bool

    /// "Note(n1): this device's change of title was replaced by the server's version 7".
    public var description: String {
        let what = fields.isEmpty ? "this device's upload" : "this device's change of \(fields.joined(separator: ", "))"
        return "\(object): \(what) was \(isDeletion ? "deleted" : "replaced") by the server's version \(version ?? "(none)")"
    }
}

/// What the engine remembers of one accepted upload until a download changes what it changed:
/// its version, and the properties the upload changed with the values it sent (JSON text;
/// `nil`: the upload removed the property).
struct UploadedChanges: Codable, Sendable, Equatable {
    /// A property the upload changed: its coding-key path (kept whole: a key may hold a ".")
    /// and the value sent.
    struct Field: Codable, Sendable, Equatable {
        var path: [String]
        var value: String?

        /// The path as reports name it: "address.city".
        var name: String { path.joined(separator: ".") }
    }

    var version: String?
    var fields: [Field]
    /// When it was recorded, as a count of the type's records: the oldest go first.
    var order: Int

    /// The changes from `base` (nil: a new object, every property is a change) to `uploaded`,
    /// both without their status; `nil` when nothing changed.
    static func of<T: Encodable>(base: T?, uploaded: T, version: String?, order: Int) throws -> UploadedChanges? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let before = try base.map { try JSONReader.parse(encoder.encode(Garage.withoutStatus($0))) }
        let after = try JSONReader.parse(encoder.encode(Garage.withoutStatus(uploaded)))
        var fields: [Field] = []
        collect(before, after, path: [], into: &fields)
        return fields.isEmpty ? nil : UploadedChanges(version: version, fields: fields, order: order)
    }

    /// The paths where `before` and `after` differ, into `fields` with `after`'s value: nested
    /// objects property by property, anything else whole (as ``SyncMerge/fields(bothChanged:)``).
    private static func collect(_ before: JSONValue?, _ after: JSONValue?, path: [String], into fields: inout [Field]) {
        if before == after { return }
        var beforeMembers: [JSONMember]? = before == nil ? [] : nil
        if case .object(let members)? = before { beforeMembers = members }
        guard case .object(let afterMembers)? = after, let beforeMembers else {
            fields.append(Field(path: path, value: text(after)))
            return
        }
        let beforeLookup = MemberLookup(beforeMembers), afterLookup = MemberLookup(afterMembers)
        // A status is the store's, not content: a child's too (the root's is set alike by both).
        var seen: Set<String> = ["syncStatus"]
        for member in afterMembers + beforeMembers where seen.insert(member.key).inserted {
            collect(beforeLookup[member.key], afterLookup[member.key], path: path + [member.key], into: &fields)
        }
    }

    private static func text(_ value: JSONValue?) -> String? {
        value.map { String(decoding: JSONWriter.bytes(from: $0), as: UTF8.self) }
    }

    /// The recorded properties `downloaded` holds otherwise, sorted.
    func replaced<T: Encodable>(in downloaded: T) throws -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let document: JSONValue? = try JSONReader.parse(encoder.encode(Garage.withoutStatus(downloaded)))
        return fields.compactMap { field in
            var value = document
            for key in field.path {
                guard case .object(let members)? = value else { value = nil; break }
                value = MemberLookup(members)[key]
            }
            return Self.text(value) == field.value ? nil : field.name
        }.sorted()
    }
}

/// The settings where an engine keeps what it uploaded, by type.
extension SyncEngineSettings {
    static func uploads(_ typeName: String) -> SettingsKey<SyncEngineSettings, [String: UploadedChanges]> {
        SettingsKey(id: "uploads-\(typeName)", defaultValue: [:])
    }
}

extension SyncEngine {
    /// Remembers the changes `claim`'s accepted uploads made (by identifier, with the server's
    /// version of each), until the objects come back; forgets those of the objects whose
    /// deletion the server took: this device deleted them itself, so its deletion coming back
    /// replaces nothing.
    func rememberUploads<T: Codable>(_ claim: Claim<T>, _ results: UploadResults<T>, _ typeName: String) async throws {
        let key = SyncEngineSettings.uploads(typeName)
        var remembered = try await garage.value(for: key)
        var order = (remembered.values.map(\.order).max() ?? 0) + 1
        var changed = false
        for identifier in claim.deletions where remembered[identifier] != nil {
            guard case .accepted? = results[identifier] else { continue }
            remembered[identifier] = nil
            changed = true
        }
        for (index, identifier) in claim.identifiers.enumerated() {
            let version: String?
            switch results[identifier] {
            case .accepted(let accepted)?: version = accepted
            case .merged(_, let merged)?: version = merged
            default: continue
            }
            let base = index < claim.bases.count ? claim.bases[index] : nil
            guard let changes = try UploadedChanges.of(base: base, uploaded: claim.objects[index], version: version,
                                                       order: order) else { continue }
            remembered[identifier] = changes
            order += 1
            changed = true
        }
        guard changed else { return }
        if remembered.count > ReplacedUpload.remembered {
            for identifier in remembered.sorted(by: { $0.value.order < $1.value.order })
                .prefix(remembered.count - ReplacedUpload.remembered).map(\.key) {
                remembered[identifier] = nil
            }
        }
        try await garage.set(remembered, for: key)
    }

    /// The uploads of this device that `changes`, a downloaded page of which `applied` were
    /// parked as the server's (not merged with a local edit, whose report names its conflicts),
    /// replaced. An upload named, deleted, or merged with a local edit is forgotten; one that
    /// came back as it was is kept, for the next version.
    func replacedUploads<T: Codable>(by changes: [SyncChange<T>], applied: Set<String>, _ typeName: String) async throws -> [ReplacedUpload] {
        let key = SyncEngineSettings.uploads(typeName)
        var remembered = try await garage.value(for: key)
        guard !remembered.isEmpty else { return [] }
        var replaced: [ReplacedUpload] = []
        var changed = false
        for change in changes {
            guard let uploaded = remembered[change.identifier] else { continue }
            let object = ObjectKey(typeName: typeName, identifier: change.identifier)
            if let downloaded = change.object {
                let fields = applied.contains(change.identifier) ? try uploaded.replaced(in: downloaded) : []
                // Its own upload back (nothing replaced): kept for the next version.
                if fields.isEmpty, applied.contains(change.identifier) { continue }
                remembered[change.identifier] = nil
                changed = true
                if !fields.isEmpty {
                    replaced.append(ReplacedUpload(object: object, uploadedVersion: uploaded.version, version: change.version,
                                                   fields: fields, isDeletion: false))
                }
            } else {
                remembered[change.identifier] = nil
                changed = true
                replaced.append(ReplacedUpload(object: object, uploadedVersion: uploaded.version, version: change.version,
                                               fields: uploaded.fields.map(\.name).sorted(), isDeletion: true))
            }
        }
        if changed { try await garage.set(remembered, for: key) }
        return replaced
    }
}
