import Foundation
import GarageLite

// Downloads: the feeds of the requester's scopes after its cursor. A cursor is the position
// reached in each scope's feed, as JSON (`{"team:1":17}`): opaque to the device, and the same
// on every instance, since positions are the store's.
extension ServedType {
    /// Answers a download request sent as JSON with the page as JSON: the page read ahead for
    /// it, when the request before it started one (``ReadAhead``) and no commit moved its
    /// scopes since, or read now. A page with more after it starts reading the next one, which
    /// the device asks for next.
    func download(json: Data, access: SyncAccess) async throws -> Data {
        let request = try JSONDecoder().decode(DownloadRequest<Object>.self, from: json)
        let answer: ReadAhead.Page
        if let early = await readAhead.take(ReadAhead.Key(typeName: typeName, access: access, cursor: request.cursor)),
           try await counters(access) == early.counters {
            answer = early
        } else {
            // None read ahead, or a commit to its scopes since it was: read now.
            answer = try await pageJSON(after: request.cursor, access: access, readingAhead: false)
        }
        if let next = answer.next {
            readAhead.start(ReadAhead.Key(typeName: typeName, access: access, cursor: next)) { [self] in
                try await pageJSON(after: next, access: access, readingAhead: true)
            }
        }
        metrics.downloaded(typeName, answer.changes, rebase: answer.rebase)
        return answer.json
    }

    /// The positions of the counters of `access`'s scopes, in the order of the sorted scopes:
    /// every commit to a scope moves its counter.
    private func counters(_ access: SyncAccess) async throws -> [Int64] {
        try await garage.retrieve(ScopeCounter.self, identifiers: access.scopes.sorted()).map { $0?.position ?? 0 }
    }

    /// The page after `cursor` as JSON. Each object whose stored JSON Foundation reads back as
    /// the garage would (``GarageSnapshot/foundationJSON(typeName:identifiers:)``) is sent as
    /// the store holds it, neither decoded nor encoded here; any other is read as `Object` and
    /// encoded.
    ///
    /// `readingAhead`: the page is read before it is asked for; the counters of its scopes are
    /// read first, so that the request that takes it can tell whether a commit followed.
    private func pageJSON(after cursor: String?, access: SyncAccess, readingAhead: Bool) async throws -> ReadAhead.Page {
        let counters = readingAhead ? try await counters(access) : nil
        let typeName = typeName, objects = objects
        let page = try await reading(DownloadRequest<Object>(typeName: typeName, cursor: cursor), access: access) { snapshot, identifiers in
            var found = try snapshot.foundationJSON(typeName: typeName, identifiers: identifiers)
            let others = found.indices.filter { found[$0] == nil }
            guard !others.isEmpty else { return found }
            let encoder = JSONEncoder()
            for (index, object) in zip(others, try objects.retrieveAll(snapshot, others.map { identifiers[$0] })) {
                found[index] = try object.map { String(decoding: try encoder.encode($0), as: UTF8.self) }
            }
            return found
        }
        return ReadAhead.Page(json: Data(page.splicedJSON()), changes: page.changes.count, rebase: page.rebase,
                              next: page.hasMore ? page.cursor : nil, counters: counters)
    }

    func download(_ request: DownloadRequest<Object>, access: SyncAccess) async throws -> DownloadBatch<Object> {
        let objects = objects
        let page = try await reading(request, access: access) { snapshot, identifiers in try objects.retrieveAll(snapshot, identifiers) }
        metrics.downloaded(typeName, page.changes.count, rebase: page.rebase)
        return page
    }

    /// The page after `request`'s cursor, its objects read by `read` (in the snapshot of
    /// their states, for the identifiers of the live ones) as `Body`: the app's type, or the
    /// JSON text of each (``DownloadBatch/splicedJSON()``).
    private func reading<Body: Codable & Sendable>(_ request: DownloadRequest<Object>, access: SyncAccess,
                               read: @escaping @Sendable (GarageSnapshot, [String]) throws -> [Body?]) async throws -> DownloadBatch<Body> {
        let cursor = FeedCursor(request.cursor)
        var positions = cursor.positions, horizons = cursor.horizons
        // Tombstones purged since the download began, after the position it reached: the device
        // may have missed a deletion. It downloads everything again (keeping its unsynced
        // changes), and deletes what it doesn't get back. (Those purged before it began, it
        // never had.)
        let scopes = access.scopes.sorted()
        let started = positions
        func isBehind(_ current: [Int64]) -> Bool {
            zip(scopes, current).contains { scope, horizon in
                guard let position = started[scope], position > 0 else { return false }
                return horizon > cursor.horizons[scope] ?? 0 && position < horizon
            }
        }
        let current = try await garage.retrieve(ScopeHorizon.self, identifiers: scopes).map { $0?.position ?? 0 }
        if isBehind(current) { return DownloadBatch(changes: [], cursor: nil, hasMore: false, rebase: true) }
        for (scope, horizon) in zip(scopes, current) where (positions[scope] ?? 0) == 0 {
            horizons[scope] = horizon               // a new reader of the scope: from this horizon on
        }
        var entries: [FeedEntry] = []
        var hasMore = false
        for scope in access.scopes.sorted() {
            let room = pageSize - entries.count
            guard room > 0 else {
                hasMore = true
                break
            }
            let after = positions[scope] ?? 0
            let query = Query(FeedEntry.self)
                .filter(Field("typeName") == typeName && Field("scope") == scope && Field("position") > Double(after))
                .sorted(by: Field("position"))
                .limit(room + 1)
            let found = try await garage.retrieve(query)
            if found.count > room { hasMore = true }
            for entry in found.prefix(room) {
                entries.append(entry)
                positions[scope] = entry.position
            }
        }
        // A purge that committed between the horizons' read and the entries': the entries may
        // have skipped a tombstone this device needed.
        let after = try await garage.retrieve(ScopeHorizon.self, identifiers: scopes).map { $0?.position ?? 0 }
        if after != current, isBehind(after) { return DownloadBatch(changes: [], cursor: nil, hasMore: false, rebase: true) }
        return DownloadBatch(changes: try await changes(entries, read: read), cursor: FeedCursor(positions: positions, horizons: horizons).text,
                             hasMore: hasMore)
    }

    /// The changes feed entries stand for: each object as the server has it, or its deletion,
    /// with the change it came from (``SyncChangeID``: a device knows its own).
    ///
    /// The objects and their states are read in one snapshot, in one access: an object and its
    /// state commit together, so the version sent is the object's. (A device that took a newer
    /// object for an older version would upload its next edit as based on it, over changes it
    /// never saw.) The object may have changed again since its entry was read: its new position
    /// sends it again.
    private func changes<Body: Codable & Sendable>(_ entries: [FeedEntry],
                               read: @escaping @Sendable (GarageSnapshot, [String]) throws -> [Body?]) async throws -> [SyncChange<Body>] {
        guard !entries.isEmpty else { return [] }
        let typeName = typeName
        let stateIDs = entries.map { ObjectState.id(typeName: typeName, identifier: $0.identifier) }
        let (states, values) = try await garage.readingSnapshot("read \(entries.count) changes of \(typeName)'s feeds") { snapshot in
            let states = try snapshot.retrieve(ObjectState.self, typeName: ObjectState.storedTypeName, identifiers: stateIDs)
            // Deleted, or moved out of the entry's scope: a deletion for this scope's devices.
            let live = entries.indices.filter { index in
                states[index].map { !$0.isDeleted && $0.scope == entries[index].scope } == true && !entries[index].isDeleted
            }
            let values = try read(snapshot, live.map { entries[$0].identifier })
            return (states, Dictionary(uniqueKeysWithValues: zip(live, values)))
        }
        return entries.indices.map { index in
            let entry = entries[index], state = states[index]
            guard let state, let object = values[index] ?? nil else {
                let version = state.map { max($0.version, entry.version) } ?? entry.version
                return SyncChange(identifier: entry.identifier, object: nil, version: String(version), changeID: state?.change)
            }
            // A merge is not the device's own change: it is news to that device too.
            return SyncChange(identifier: entry.identifier, object: object, version: String(state.version),
                              changeID: state.isMerge == true ? nil : state.change)
        }
    }
}

extension DownloadBatch where Object == String {
    /// The page as a `DownloadBatch`'s JSON, each object a JSON text written as it is (not as
    /// a string): `{"changes":[{"identifier":…,"object":…,"version":…,"changeID":{…}}],"hasMore":…,"rebase":…,"cursor":…}`,
    /// members without a value left out, as `JSONEncoder` leaves them.
    func splicedJSON() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(changes.reduce(64) { $0 + 96 + $1.identifier.utf8.count + ($1.object?.utf8.count ?? 0) })
        out.append(contentsOf: #"{"changes":["#.utf8)
        for (index, change) in changes.enumerated() {
            out.append(contentsOf: (index == 0 ? #"{"identifier":"# : #",{"identifier":"#).utf8)
            JSONWriter.writeString(change.identifier, into: &out)
            if let object = change.object {
                out.append(contentsOf: #","object":"#.utf8)
                out.append(contentsOf: object.utf8)
            }
            if let version = change.version {
                out.append(contentsOf: #","version":"#.utf8)
                JSONWriter.writeString(version, into: &out)
            }
            if let changeID = change.changeID {
                out.append(contentsOf: #","changeID":{"device":"#.utf8)
                JSONWriter.writeString(changeID.device, into: &out)
                out.append(contentsOf: #","revision":\#(changeID.revision)}"#.utf8)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #"],"hasMore":\#(hasMore),"rebase":\#(rebase)"#.utf8)
        if let cursor {
            out.append(contentsOf: #","cursor":"#.utf8)
            JSONWriter.writeString(cursor, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// The position a download reached in each scope's feed, and the scope's horizon when the
/// download began in it (the last position whose tombstones were purged then).
struct FeedCursor {
    var positions: [String: Int64]
    var horizons: [String: Int64]

    init(positions: [String: Int64], horizons: [String: Int64] = [:]) {
        self.positions = positions
        self.horizons = horizons
    }

    private struct Form: Codable {
        var positions: [String: Int64]
        var horizons: [String: Int64]
    }

    /// The positions and horizons a cursor's text holds; none for `nil` or a text of another
    /// form (a cursor of another server: the feeds are read from their start). A cursor of the
    /// first form (`{"team:1":17}`, positions only) has no horizons: any purge after its
    /// positions asks for a rebase.
    init(_ text: String?) {
        let data = text.map { Data($0.utf8) } ?? Data()
        if let form = try? JSONDecoder().decode(Form.self, from: data) {
            (positions, horizons) = (form.positions, form.horizons)
        } else {
            positions = (try? JSONDecoder().decode([String: Int64].self, from: data)) ?? [:]
            horizons = [:]
        }
    }

    var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let form = Form(positions: positions, horizons: horizons.filter { $0.value > 0 })
        return (try? encoder.encode(form)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
