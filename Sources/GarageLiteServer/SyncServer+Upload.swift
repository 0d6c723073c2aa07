import Foundation
import GarageLite

/// One type a ``SyncServer`` serves: its rules, and the answers to its uploads and downloads.
protocol ServedTypeProtocol: Sendable {
    /// Answers an upload sent as JSON (an `UploadBatch`) with JSON (`UploadResults`).
    func upload(json: Data, access: SyncAccess) async throws -> Data
    /// Answers a download request sent as JSON (a `DownloadRequest`) with JSON (a `DownloadBatch`).
    func download(json: Data, access: SyncAccess) async throws -> Data
}

struct ServedType<Object: Codable & Sendable & SendableMetatype>: ServedTypeProtocol {
    let garage: Garage
    let pageSize: Int
    let keptVersions: Int
    let typeName: String
    let rules: SyncRules<Object>
    let objects: ServedObjects<Object>
    let metrics: SyncServerMetrics
    let readAhead: ReadAhead

    init(server: SyncServer, typeName: String, rules: SyncRules<Object>, objects: ServedObjects<Object>) {
        garage = server.garage
        pageSize = server.pageSize
        keptVersions = server.keptVersions
        metrics = server.metrics
        readAhead = server.readAhead
        self.typeName = typeName
        self.rules = rules
        self.objects = objects
    }

    /// What a change outside the requester's scopes is answered: the same whether the object
    /// exists or not, so that the answer tells nothing of other scopes.
    static var refusal: String { "not in the scopes this request may write" }

    func upload(json: Data, access: SyncAccess) async throws -> Data {
        let batch = try JSONDecoder().decode(UploadBatch<Object>.self, from: json)
        return try JSONEncoder().encode(try await upload(batch, access: access))
    }

    /// Answers a batch in one transaction (one commit, whatever its size), tried again from the
    /// start, each change decided again, when another instance changed what it read (an
    /// object's state, a feed's counter) before it committed.
    ///
    /// The batch's states and objects are read at once, its changes decided in memory
    /// (``UploadPlan``), then written with one call a kind of record: a handful of garage calls
    /// a batch, not several a change (on PostgreSQL each is a snapshot, and round trips).
    ///
    /// A change the store can't take as it is (an identifier it can't key, a value it refuses:
    /// U+0000) is answered ``UploadResult/failed(_:)`` with the reason, the batch's other changes
    /// as usual; a failure of the store itself is thrown (nothing of the batch written). When
    /// the batch's write meets such a change, the batch is taken again one change at a time,
    /// each written after it is decided, so that the refusal names its change.
    func upload(_ batch: UploadBatch<Object>, access: SyncAccess) async throws -> UploadResults<Object> {
        let results = try await taking(batch, access: access)
        metrics.uploaded(typeName, results)
        return results
    }

    private func taking(_ batch: UploadBatch<Object>, access: SyncAccess) async throws -> UploadResults<Object> {
        var attempt = 0
        var oneByOne = false
        while true {
            attempt += 1
            do {
                return try await garage.transaction {
                    var plan = try await UploadPlan<Object>.reading(batch.changes.map(\.identifier), of: self)
                    var results = UploadResults<Object>()
                    for change in batch.changes {
                        results[change.identifier] = try await take(change, access: access, plan: &plan, writing: oneByOne)
                    }
                    if !oneByOne { try await plan.write(self, continuing: false) }
                    return results
                }
            } catch where !oneByOne && Self.isRefusal(error) {
                oneByOne = true
                attempt -= 1
            } catch let error as GarageError {
                guard case .staleObject = error, attempt < SyncServer.attempts else { throw error }
                // Instances that raced on one scope's counter: not again in step.
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...(attempt * 4))))
            }
        }
    }

    /// Whether `error` is the store's refusal of one change's object (not a failure of the
    /// store): the change is answered ``UploadResult/failed(_:)``.
    static func isRefusal(_ error: any Error) -> Bool {
        switch error {
        case GarageError.invalidIdentifier, GarageError.corruptData: return true
        case is EncodingError: return true
        default: return false
        }
    }

    /// Answers one change, inside the batch's transaction, into `plan`. With `writing` (the
    /// batch taken one change at a time), writes it at once, and a refusal of the store answers
    /// the change ``UploadResult/failed(_:)``: its write throws before anything of it is
    /// written (its object is written first), and `plan` is put back as it was before it.
    /// Without, a refusal is thrown: the batch is then taken again one change at a time. (A copy
    /// of `plan` kept before each change would be a copy of the whole batch's plan each time.)
    private func take(_ change: SyncChange<Object>, access: SyncAccess, plan: inout UploadPlan<Object>,
                      writing: Bool) async throws -> UploadResult<Object> {
        if let problem = Self.problem(ofIdentifier: change.identifier) { return .failed(problem) }
        guard writing else { return try await deciding(change, access: access, plan: &plan) }
        let before = plan
        do {
            let result = try await deciding(change, access: access, plan: &plan)
            try await plan.write(self, continuing: true)
            return result
        } catch where Self.isRefusal(error) {
            plan = before
            return .failed("the store refuses it: \(error)")
        }
    }

    /// The longest identifier a server takes, in UTF-8 bytes: a key every engine's index holds.
    static var maximumIdentifierLength: Int { 512 }

    /// Why the server doesn't take an object of identifier `identifier`, or `nil`.
    static func problem(ofIdentifier identifier: String) -> String? {
        guard identifier.isEmpty || identifier.utf8.count > maximumIdentifierLength || identifier.unicodeScalars.contains("\u{0}") else {
            return nil
        }
        return "an identifier has 1 to \(maximumIdentifierLength) bytes and no U+0000"
    }

    private func deciding(_ change: SyncChange<Object>, access: SyncAccess, plan: inout UploadPlan<Object>) async throws -> UploadResult<Object> {
        let stateID = ObjectState.id(typeName: typeName, identifier: change.identifier)
        let state = try plan.state(change.identifier)
        // A deletion of an object the server never had (version 0, no scope, in no feed): kept
        // only so that the edit it follows, arriving late, doesn't bring the object back. To any
        // other device the object is new.
        let isDeletionOfUnknown = state.map { $0.version == 0 && $0.isDeleted } ?? false
        if let state, !isDeletionOfUnknown, !access.writableScopes.contains(state.scope) {
            // Of a scope the request doesn't read: answered as if there were no such object (a
            // deletion is done, a write refused as one into a scope not granted), so that the
            // answer tells nothing of it.
            if !access.scopes.contains(state.scope), change.object == nil { return .accepted(version: nil) }
            return .failed(Self.refusal)
        }
        let current = state.map { String($0.version) }
        // Its answer was lost: the change is the one the current version came from. (Of the
        // same kind: a device's deletion names the revision of the edit it deletes, so that it
        // follows it, and is not that edit sent again.)
        if let changeID = change.changeID, let state, state.change == changeID, state.isDeleted == (change.object == nil) {
            if state.isMerge == true, let stored = try plan.object(change.identifier) {
                return .merged(stored, version: current)
            }
            return .accepted(version: current)
        }
        if state?.isDeleted ?? true, change.object == nil {
            // A deletion of what the server doesn't have: done. Of what it never had, recorded:
            // the device's edit it deletes may still be on its way (a request that outlived its
            // answer), and must not be taken after it.
            if state == nil, let changeID = change.changeID {
                plan.set(ObjectState(id: stateID, typeName: typeName, identifier: change.identifier, scope: "", version: 0,
                                     isDeleted: true, change: changeID))
                return .accepted(version: "0")
            }
            return .accepted(version: current)
        }
        let stored = state?.isDeleted == false ? try plan.object(change.identifier) : nil
        if let state, !isDeletionOfUnknown || change.changeID?.device == state.change?.device {
            // Based on the current version, or a later change of the device that made it (which
            // has seen its own change, whatever version it still names).
            // At the same revision, only a deletion follows the edit it deletes (a deletion
            // doesn't bump the revision): the edit arriving after its own deletion (a request that
            // outlived its answer) is not later, and would bring the object back.
            // A merge is not the device's own change: a later change of the device is merged with it.
            let isOwnLater = state.isMerge == true ? false : change.changeID.flatMap { changeID in
                state.change.map { made in
                    changeID.follows(made) && (changeID.revision > made.revision || (change.object == nil && !state.isDeleted))
                }
            } ?? false
            if change.version != current && !isOwnLater {
                guard let merge = rules.merge, let edit = change.object, let stored else { return .conflict(stored, version: current) }
                return try await merging(change, edit, into: stored, state: state, with: merge, access: access, plan: &plan)
            }
        }
        return try writing(change, over: state, stored: stored, access: access, plan: &plan)
    }

    /// Merges `edit`, based on an older version than `state`'s, with `stored`, the server's copy:
    /// the merge is written as the next version (validated as any change) and answered
    /// ``UploadResult/merged(_:version:)``; the server's copy as it is when the merge is it. A
    /// merge that throws leaves the conflict to the device.
    private func merging(_ change: SyncChange<Object>, _ edit: Object, into stored: Object, state: ObjectState,
                         with merge: SyncMerge<Object>, access: SyncAccess, plan: inout UploadPlan<Object>) async throws -> UploadResult<Object> {
        var base: Object?
        if let version = change.version.flatMap({ Int64($0) }) { base = try await baseObject(change.identifier, version: version, plan: plan) }
        guard let merged = try? merge.merge(base: base, local: edit, downloaded: stored).object else {
            return .conflict(stored, version: String(state.version))
        }
        if try Garage.sameJSON(merged, stored) {
            // The edit holds nothing the server's copy doesn't: the copy is the merge.
            return .merged(stored, version: String(state.version))
        }
        let mergedChange = SyncChange(identifier: change.identifier, object: merged, version: String(state.version), changeID: change.changeID)
        switch try writing(mergedChange, over: state, stored: stored, access: access, isMerge: true, plan: &plan) {
        case .accepted(let version): return .merged(merged, version: version)
        case let other: return other
        }
    }

    /// The object as it was at `version`, when the server keeps it (this batch's versions first).
    private func baseObject(_ identifier: String, version: Int64, plan: UploadPlan<Object>) async throws -> Object? {
        let id = ObjectVersion.id(typeName: typeName, identifier: identifier, version: version)
        let kept: ObjectVersion?
        if let planned = plan.versions[id] { kept = planned } else { kept = try await garage.retrieve(ObjectVersion.self, identifier: id) }
        guard let kept else { return nil }
        return try? JSONDecoder().decode(Object.self, from: Data(kept.json.utf8))
    }

    /// Writes `change` of an object the server has (`state`) or not (`nil`) into `plan`, once
    /// decided; `isMerge`: the change is the server's merge of the device's.
    private func writing(_ change: SyncChange<Object>, over state: ObjectState?, stored: Object?, access: SyncAccess,
                         isMerge: Bool = false, plan: inout UploadPlan<Object>) throws -> UploadResult<Object> {
        let scope = change.object.map(rules.scope) ?? state?.scope ?? ""
        guard access.writableScopes.contains(scope) else { return .failed(Self.refusal) }
        if let object = change.object, let declared = try objects.identifier(object), declared != change.identifier {
            return .failed("its object's id is not the identifier of the change (\(change.identifier))")
        }
        if let reason = rules.validate(access, change.object, stored) { return .failed(reason) }
        let version = (state?.version ?? 0) + 1
        let isDeleted = change.object == nil
        plan.set(change.object, of: change.identifier)
        if let state, state.scope != scope, !state.isDeleted {
            // Moved: a deletion in the scope it left, for the devices that read only that one.
            plan.move(change.identifier, in: state.scope, version: version, isDeleted: true)
        }
        plan.move(change.identifier, in: scope, version: version, isDeleted: isDeleted)
        var next = state ?? ObjectState(id: ObjectState.id(typeName: typeName, identifier: change.identifier),
                                        typeName: typeName, identifier: change.identifier, scope: scope, version: 0,
                                        isDeleted: false)
        next.scope = scope
        next.version = version
        next.isDeleted = isDeleted
        next.change = change.changeID
        next.isMerge = isMerge ? true : nil
        plan.set(next)
        if rules.merge != nil { try keep(change.object, of: change.identifier, at: version, plan: &plan) }
        return .accepted(version: String(version))
    }

    /// Keeps `object`, the object `identifier`'s version `version`, as the base of the changes
    /// based on it, and forgets the version that falls out of the kept ones; a deletion
    /// (`nil`) forgets them all.
    private func keep(_ object: Object?, of identifier: String, at version: Int64, plan: inout UploadPlan<Object>) throws {
        func id(_ version: Int64) -> String { ObjectVersion.id(typeName: typeName, identifier: identifier, version: version) }
        guard let object else {
            for old in max(1, version - Int64(keptVersions))..<version { plan.versions[id(old)] = .some(nil) }
            return
        }
        plan.versions[id(version)] = ObjectVersion(id: id(version), json: String(decoding: try JSONEncoder().encode(object), as: UTF8.self))
        if version > Int64(keptVersions) { plan.versions[id(version - Int64(keptVersions))] = .some(nil) }
    }
}
