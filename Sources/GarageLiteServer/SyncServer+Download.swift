import Foundation
import GarageLite

// Downloads: the feeds of the requester's scopes after its cursor. A cursor is the position
// reached in each scope's feed, as JSON (`{"team:1":17}`): opaque to the device, and the same
// on every instance, since positions are the store's.
extension ServedType {
    func download(json: Data, access: SyncAccess) async throws -> Data {
        let request = try JSONDecoder().decode(DownloadRequest<Object>.self, from: json)
        return try JSONEncoder().encode(try await download(request, access: access))
    }

    func download(_ request: DownloadRequest<Object>, access: SyncAccess) async throws -> DownloadBatch<Object> {
        var positions = FeedCursor(request.cursor).positions
        var changes: [SyncChange<Object>] = []
        var hasMore = false
        for scope in access.scopes.sorted() {
            let room = pageSize - changes.count
            guard room > 0 else {
                hasMore = true
                break
            }
            let after = positions[scope] ?? 0
            let query = Query(FeedEntry.self)
                .filter(Field("typeName") == typeName && Field("scope") == scope && Field("position") > Double(after))
                .sorted(by: Field("position"))
                .limit(room + 1)
            let entries = try await garage.retrieve(query)
            if entries.count > room { hasMore = true }
            for entry in entries.prefix(room) {
                changes.append(try await change(entry))
                positions[scope] = entry.position
            }
        }
        return DownloadBatch(changes: changes, cursor: FeedCursor(positions: positions).text, hasMore: hasMore)
    }

    /// The change a feed entry stands for: the object as the server has it, or its deletion,
    /// with the change it came from (``SyncChangeID``: a device knows its own).
    ///
    /// The object may have changed again since the entry was read (its new position sends it
    /// again), and another instance may commit between two reads: the object is read between
    /// two reads of its state that agree, so that the version sent is the object's (an object
    /// and its state commit together). A device that took a newer object for an older version
    /// would upload its next edit as based on it, over changes it never saw.
    private func change(_ entry: FeedEntry) async throws -> SyncChange<Object> {
        let stateID = ObjectState.id(typeName: typeName, identifier: entry.identifier)
        var before = try await garage.retrieve(ObjectState.self, identifier: stateID)
        while true {
            guard let state = before, state.scope == entry.scope, !state.isDeleted, !entry.isDeleted else {
                // Deleted, or moved out of the entry's scope: a deletion for this scope's devices.
                let version = before.map { max($0.version, entry.version) } ?? entry.version
                return SyncChange(identifier: entry.identifier, object: nil, version: String(version), changeID: before?.change)
            }
            let object = try await objects.retrieve(entry.identifier)
            let after = try await garage.retrieve(ObjectState.self, identifier: stateID)
            if after?.version == state.version {
                // A merge is not the device's own change: it is news to that device too.
                return SyncChange(identifier: entry.identifier, object: object, version: String(state.version),
                                  changeID: state.isMerge == true ? nil : state.change)
            }
            before = after
        }
    }
}

/// The position a download reached in each scope's feed.
struct FeedCursor {
    var positions: [String: Int64]

    init(positions: [String: Int64]) {
        self.positions = positions
    }

    /// The positions a cursor's text holds; none for `nil` or a text of another form (a
    /// cursor of another server: the feeds are read from their start).
    init(_ text: String?) {
        positions = text.flatMap { try? JSONDecoder().decode([String: Int64].self, from: Data($0.utf8)) } ?? [:]
    }

    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(positions)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
