import Foundation
import GarageLite

/// One upload batch's reads and writes, in memory: the states and objects of its changes read
/// at once, in one snapshot (``reading(_:of:)``); each change decided against them as the
/// changes before it in the batch left them; then written with one call a kind of record
/// (``write(_:continuing:)``): the objects first, then their kept versions, their states, and
/// their feeds' entries and counters.
struct UploadPlan<Object: Codable & Sendable & SendableMetatype>: Sendable {
    /// Each identifier's state, as the batch's changes so far leave it (`nil`: the server has
    /// none); or why it can't be read (the change that needs it is answered with it).
    private var states: [String: Result<ObjectState?, any Error>]
    /// Each identifier's object, for those whose state is live, as the changes so far leave it;
    /// or why it can't be read (the change that needs it is answered with it).
    private var objects: [String: Result<Object?, any Error>]
    /// Object versions kept as the bases of merges (`nil`: forgotten), by their ids: this
    /// batch's, to write and to read before the store's.
    var versions: [String: ObjectVersion?] = [:]
    /// The identifiers whose object and state to write, in the order first written.
    private var written: [String] = []
    private var writing: Set<String> = []
    /// The feed entries to move, in order: each takes its scope's next position.
    private var moves: [(identifier: String, scope: String, version: Int64, isDeleted: Bool)] = []

    /// The states of `identifiers` and the objects of those live, read in one snapshot of the
    /// served type's garage (inside the batch's transaction: its pending changes included).
    static func reading(_ identifiers: [String], of served: ServedType<Object>) async throws -> Self {
        let typeName = served.typeName, retrieveAll = served.objects.retrieveAll
        let unique = Array(Set(identifiers))
        let stateIDs = unique.map { ObjectState.id(typeName: typeName, identifier: $0) }
        let (states, objects) = try await served.garage.readingSnapshot("read \(unique.count) states of \(typeName) for an upload") { snapshot in
            let read = { (identifiers: [String]) in
                try snapshot.retrieve(ObjectState.self, typeName: ObjectState.storedTypeName, identifiers: identifiers)
            }
            // All at once; one at a time when one can't be read, which fails its own change only.
            let states: [Result<ObjectState?, any Error>] = (try? read(stateIDs).map { .success($0) })
                ?? stateIDs.map { id in Result { try read([id]).first ?? nil } }
            let live = zip(unique, states).filter { (try? $0.1.get())?.map { !$0.isDeleted } == true }.map(\.0)
            let all = try? retrieveAll(snapshot, live)
            var objects: [String: Result<Object?, any Error>] = [:]
            for (index, identifier) in live.enumerated() {
                objects[identifier] = all.map { .success($0[index]) } ?? Result { try retrieveAll(snapshot, [identifier]).first ?? nil }
            }
            return (states, objects)
        }
        return UploadPlan(states: Dictionary(uniqueKeysWithValues: zip(unique, states)), objects: objects)
    }

    /// The state of `identifier` as the batch's changes so far leave it (`nil`: none).
    func state(_ identifier: String) throws -> ObjectState? {
        try states[identifier]?.get() ?? nil
    }

    /// The object `identifier` as the batch's changes so far leave it (`nil`: none).
    func object(_ identifier: String) throws -> Object? {
        try objects[identifier]?.get() ?? nil
    }

    /// Writes `object` (`nil`: deletes it) under `identifier`.
    mutating func set(_ object: Object?, of identifier: String) {
        objects[identifier] = .success(object)
        if writing.insert(identifier).inserted { written.append(identifier) }
    }

    /// Writes `state`.
    mutating func set(_ state: ObjectState) {
        states[state.identifier] = .success(state)
        if writing.insert(state.identifier).inserted { written.append(state.identifier) }
    }

    /// Moves the object `identifier` to the end of `scope`'s feed, at `version`.
    mutating func move(_ identifier: String, in scope: String, version: Int64, isDeleted: Bool) {
        moves.append((identifier, scope, version, isDeleted))
    }

    /// Forgets what is still to write, once written.
    private mutating func forgetWrites() {
        written = []
        moves = []
        versions = [:]
        writing = []
    }

    /// Writes what the decisions so far planned, in the batch's transaction, and forgets it.
    /// `continuing`: more changes are decided after this write, against the states it wrote
    /// (read again, with their new revisions).
    mutating func write(_ served: ServedType<Object>, continuing: Bool) async throws {
        let garage = served.garage, typeName = served.typeName
        let identifiers = written
        // The objects first: the store's refusal of one (U+0000, an unkeyable identifier) then
        // comes before anything of its change is written.
        var parked: [(Object, String)] = []
        for identifier in identifiers {
            guard case .success(let object)? = objects[identifier] else { continue }
            if let object { parked.append((object, identifier)) } else { try await served.objects.delete(identifier) }
        }
        if !parked.isEmpty { try await served.objects.parkAll(parked) }
        let kept = versions.values.compactMap { $0 }
        if !kept.isEmpty { try await garage.parkAll(kept) }
        for (id, version) in versions where version == nil { _ = try await garage.delete(ObjectVersion.self, identifier: id) }
        let states = identifiers.compactMap { try? self.states[$0]?.get() ?? nil }
        if !states.isEmpty { try await garage.parkAll(states) }
        if !moves.isEmpty { try await writeMoves(garage, typeName) }
        if continuing, !states.isEmpty {
            let read = try await garage.retrieve(ObjectState.self, identifiers: states.map(\.id))
            for (state, stored) in zip(states, read) { self.states[state.identifier] = .success(stored) }
        }
        forgetWrites()
    }

    /// Each move takes its scope's next position, one after the other: the scopes' counters
    /// and the entries, read in one snapshot, written with one call each.
    private func writeMoves(_ garage: Garage, _ typeName: String) async throws {
        let scopes = Array(Set(moves.map(\.scope)))
        let entryIDs = Array(Set(moves.map { FeedEntry.id(typeName: typeName, scope: $0.scope, identifier: $0.identifier) }))
        let (storedCounters, storedEntries) = try await garage.readingSnapshot("read the feeds of \(moves.count) moves of \(typeName)") { snapshot in
            (try snapshot.retrieve(ScopeCounter.self, typeName: ScopeCounter.storedTypeName, identifiers: scopes),
             try snapshot.retrieve(FeedEntry.self, typeName: FeedEntry.storedTypeName, identifiers: entryIDs))
        }
        var counters = Dictionary(uniqueKeysWithValues: zip(scopes, storedCounters).map { scope, counter in
            (scope, counter ?? ScopeCounter(id: scope, position: 0))
        })
        var entries = Dictionary(uniqueKeysWithValues: zip(entryIDs, storedEntries).compactMap { id, entry in entry.map { (id, $0) } })
        var order: [String] = [], ordered: Set<String> = []
        let now = Date().timeIntervalSince1970
        for move in moves {
            counters[move.scope]?.position += 1
            counters[move.scope]?.movedAt = now
            let id = FeedEntry.id(typeName: typeName, scope: move.scope, identifier: move.identifier)
            var entry = entries[id] ?? FeedEntry(id: id, typeName: typeName, scope: move.scope, identifier: move.identifier,
                                                 position: 0, version: 0, isDeleted: false)
            entry.position = counters[move.scope]?.position ?? 0
            entry.version = move.version
            entry.isDeleted = move.isDeleted
            entry.deletedAt = move.isDeleted ? now : nil
            entries[id] = entry
            if ordered.insert(id).inserted { order.append(id) }
        }
        try await garage.parkAll(order.compactMap { entries[$0] })
        try await garage.parkAll(scopes.compactMap { counters[$0] })
    }
}
