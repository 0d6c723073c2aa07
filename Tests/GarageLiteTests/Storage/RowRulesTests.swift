import Foundation
import Testing
@testable import GarageLite

/// Issue 25, issue 45: the rules of the object table are written once, in Swift (`RowRules`), as
/// the boundary's default writes, which the reference engine (primitives only) runs; each
/// engine's fast paths (SQLite's statements, PostgreSQL's) must write the same rows. Random
/// sequences of writes (parks of every kind, deletions, downloaded deletions, statuses, claims
/// taken, taken by a claim's one statement, ended, failed and released, attempts forgotten, whole
/// types deleted, synced tombstones purged) run on a garage of the test engine and on the
/// reference engine; after every step both hold the same rows, every write returns the same,
/// and the engine's claim query returns the rows the rule says, in the same order.
///
/// `GARAGE_RULES_SEQUENCES=5000 swift test --filter RowRulesTests` runs more sequences
/// (default 150, 25 on PostgreSQL); `GARAGE_RULES_SEED` repeats a run.
@Suite("Each engine's fast paths write the rows the rules write",
       .disabled(if: TestEngine.isReference, "the reference engine is what the test compares with"))
struct RowRulesTests {
    static let environment = ProcessInfo.processInfo.environment
    static let sequences = environment["GARAGE_RULES_SEQUENCES"].flatMap { Int($0) } ?? (TestEngine.isPostgres ? 25 : 150)
    static let seed = environment["GARAGE_RULES_SEED"].flatMap { UInt64($0) } ?? 0x5275_6C65

    static let types = ["Note", "Tag"]
    static let identifiers = ["a", "b", "c"]
    static let datas = [#"{"v":1}"#, #"{"v":2}"#, #"{"v":3}"#]
    static let referenceLists = ["[]", #"[["Tag","a"]]"#, #"[["Note","b"],["Tag","c"]]"#]
    static let statuses: [SyncStatus?] = [nil, .undetermined, .notSynced, .syncing, .synced]

    /// One write, made on both stores.
    enum Write: CustomStringConvertible {
        case park(ObjectKey, RowPayload)
        case delete(ObjectKey)
        case deletedOnServer(ObjectKey)
        case importRow(ObjectKey, String)
        case setStatus(SyncStatus, ObjectKey)
        case claim(ObjectKey, String)
        case claimRows(String, SyncStatus, limit: Int, String)
        case endClaim(ObjectKey, SyncStatus?, completed: Bool, failed: Bool, uploaded: String?, version: String?, forgetting: String?)
        case releaseClaims(before: Double)
        case forgetAttempts(String, [String]?)
        case deleteAll(String?)
        case purgeSyncedTombstones(String?)

        var description: String {
            switch self {
            case .park(let key, let payload):
                return "park \(key) \(payload.data) status \(payload.syncStatus.map { "\($0)" } ?? "nil") root \(payload.isRoot) "
                    + "refs \(payload.references) downloaded \(payload.isDownloaded) keepsSyncing \(payload.keepsSyncing) "
                    + "folded \(payload.foldedRevisions) first \(payload.firstData ?? "nil") base \(payload.base ?? "nil") version \(payload.serverVersion ?? "nil") "
                    + "encrypted \(payload.isEncrypted)"
            case .delete(let key): return "delete \(key)"
            case .deletedOnServer(let key): return "deletedOnServer \(key)"
            case .importRow(let key, let data): return "import \(key) \(data)"
            case .setStatus(let status, let key): return "setStatus \(status) \(key)"
            case .claim(let key, let claim): return "claim \(key) \(claim)"
            case .claimRows(let type, let status, let limit, let claim): return "claimRows \(type) \(status) \(limit) \(claim)"
            case .endClaim(let key, let status, let completed, let failed, let uploaded, let version, let forgetting):
                return "endClaim \(key) \(status.map { "\($0)" } ?? "nil") completed \(completed) failed \(failed) "
                    + "uploaded \(uploaded ?? "nil") version \(version ?? "nil") forgetting \(forgetting ?? "nil")"
            case .releaseClaims(let before): return "releaseClaims before \(before)"
            case .forgetAttempts(let type, let identifiers): return "forgetAttempts \(type) \(identifiers ?? ["all"])"
            case .deleteAll(let type): return "deleteAll \(type ?? "every type")"
            case .purgeSyncedTombstones(let type): return "purgeSyncedTombstones \(type ?? "every type")"
            }
        }
    }

    static func randomWrite(_ random: inout SplitMix64, step: Int) -> Write {
        let key = ObjectKey(typeName: types.randomElement(using: &random)!, identifier: identifiers.randomElement(using: &random)!)
        switch Int.random(in: 0..<24, using: &random) {
        case 0..<8:
            var payload = RowPayload(
                data: datas.randomElement(using: &random)!, isEncrypted: false,
                syncStatus: statuses.randomElement(using: &random)!, references: referenceLists.randomElement(using: &random)!,
                isRoot: Bool.random(using: &random))
            if Int.random(in: 0..<5, using: &random) == 0 {
                payload.isDownloaded = true
                payload.syncStatus = .synced
            }
            payload.keepsSyncing = Int.random(in: 0..<4, using: &random) == 0
            // A merge's base, and data in the other encryption (whose park records no base).
            if Int.random(in: 0..<6, using: &random) == 0 { payload.base = datas.randomElement(using: &random)! }
            if Int.random(in: 0..<3, using: &random) == 0 { payload.serverVersion = "v\(Int.random(in: 1...2, using: &random))" }
            payload.isEncrypted = Int.random(in: 0..<6, using: &random) == 0
            if Int.random(in: 0..<4, using: &random) == 0 {
                payload.foldedRevisions = Int64.random(in: 1...2, using: &random)
                payload.firstData = datas.randomElement(using: &random)!
            }
            return .park(key, payload)
        case 8, 9: return .delete(key)
        case 10: return .deletedOnServer(key)
        case 11: return .setStatus(statuses.compactMap { $0 }.randomElement(using: &random)!, key)
        case 12, 13: return .claim(key, "claim \(step)")
        case 14, 15:
            return .endClaim(key, statuses.randomElement(using: &random)!, completed: Bool.random(using: &random),
                             failed: Bool.random(using: &random),
                             uploaded: Bool.random(using: &random) ? datas.randomElement(using: &random)! : nil,
                             version: Bool.random(using: &random) ? "v\(Int.random(in: 1...3, using: &random))" : nil,
                             // A first upload's base given back after a conflict: the row's, or another.
                             forgetting: Int.random(in: 0..<3, using: &random) == 0 ? datas.randomElement(using: &random)! : nil)
        case 16: return .releaseClaims(before: Double(step - Int.random(in: 0...5, using: &random)))
        case 17:
            return .forgetAttempts(key.typeName, Bool.random(using: &random) ? nil : [key.identifier])
        case 21:
            // GarageStorage's objects: references guessed, until a park writes the object's own.
            return .importRow(key, datas.randomElement(using: &random)!)
        case 19, 20:
            // Every row it can take: of rows modified at the same instant, which a smaller limit
            // takes is the engine's choice (see `claimable(_:now:)`).
            return .claimRows(key.typeName, SyncStatus.allCases.randomElement(using: &random)!, limit: 100, "claim \(step)")
        case 18:
            return .purgeSyncedTombstones(Bool.random(using: &random) ? nil : key.typeName)
        default:
            return .deleteAll(Int.random(in: 0..<4, using: &random) == 0 ? nil : key.typeName)
        }
    }

    /// Makes `write` on `statements`; returns what it returned.
    static func make(_ write: Write, on statements: any RowWriteStatements, now: Date) throws -> String {
        switch write {
        case .park(let key, let payload):
            return "\(try statements.park(key, payload, now: now))"
        case .delete(let key):
            return "\(try statements.delete(key, now: now))"
        case .deletedOnServer(let key):
            return "\(try statements.markDeletedOnServer(key, now: now))"
        case .importRow(let key, let data):
            let row = ImportedRow(data: data, isEncrypted: false, syncStatus: .notSynced, creationDate: now, modificationDate: now,
                                  references: referenceLists[1], isRemote: false)
            return "\(try statements.insertImported(key, row))"
        case .setStatus(let status, let key):
            return "\(try statements.setSyncStatus(status, of: key))"
        case .claim(let key, let claim):
            try statements.markClaimed([key], claim: claim, at: now)
            return ""
        case .claimRows(let type, let status, let limit, let claim):
            let taken = try statements.claimRows(ofType: type, status: status, limit: limit, excluding: [], claim: claim, now: now,
                                                 maximumAttempts: 2)
            // Ties in modification date are in the engine's order: which rows, not their order.
            return "\(try taken.map { try $0.get().key.description }.sorted())"
        case .endClaim(let key, let status, let completed, let failed, let uploaded, let version, let forgetting):
            let failure = failed ? (error: "refused", retryAt: now.addingTimeInterval(2)) : nil
            try statements.endClaim(key, status: status, completed: completed, failure: failure, uploaded: uploaded,
                                    version: version, forgettingBase: forgetting)
            return ""
        case .releaseClaims(let before):
            return "\(try statements.releaseClaims(takenBefore: Date(timeIntervalSince1970: before)).map(\.description).sorted())"
        case .forgetAttempts(let type, let identifiers):
            return "\(try statements.forgetAttempts(ofType: type, identifiers: identifiers))"
        case .deleteAll(let type):
            return "\(try statements.deleteAll(ofType: type, now: now))"
        case .purgeSyncedTombstones(let type):
            return "\(try statements.purgeSyncedTombstones(ofType: type))"
        }
    }

    /// Every row, every column, as text.
    static func rows(_ statements: any RowWriteStatements) throws -> [String] {
        try statements.everyRow(ofType: nil).map { row in
            "\(row.key) \(row.data) enc \(row.isEncrypted) \(row.syncStatus) created \(row.creationDate.timeIntervalSince1970) "
                + "modified \(row.modificationDate.timeIntervalSince1970) r\(row.revision) root \(row.isRoot) refs \(row.references) "
                + "claim \(row.claim ?? "-") at \(row.claimedAt?.timeIntervalSince1970 ?? -1) deleted \(row.isDeleted) "
                + "attempts \(row.attempts) error \(row.lastError ?? "-") retry \(row.retryAt?.timeIntervalSince1970 ?? -1) "
                + "remote \(row.isRemote) base \(row.base ?? "-") version \(row.serverVersion ?? "-") "
                + "references known \(row.referencesKnown)"
        }
    }

    /// What a claim of `status` rows of `type` takes (all of them; at most 2 but "a"):
    /// the modification dates in order, and the identifiers of each group of rows modified at
    /// the same instant, whose order is the engine's (see `RowRules.claimOrder`).
    static func claimable(_ statements: any RowWriteStatements, now: Date) throws -> [String] {
        var found: [String] = []
        for type in types {
            for status in SyncStatus.allCases {
                for (limit, excluding) in [(100, Set<ObjectKey>()), (2, [ObjectKey(typeName: type, identifier: "a")])] {
                    let rows = try statements.claimableRows(ofType: type, status: status, limit: limit, excluding: excluding,
                                                            now: now, maximumAttempts: 2).map { try $0.get() }
                    let dates = rows.map(\.modificationDate.timeIntervalSince1970)
                    // The ties, as sets: complete only when nothing is skipped or left out.
                    let groups = limit == 100
                        ? Dictionary(grouping: rows, by: \.modificationDate).mapValues { $0.map(\.key.identifier).sorted() }
                            .sorted { $0.key < $1.key }.map { "\($0.value)" }
                        : []
                    found.append("\(type) \(status) \(limit)/\(excluding.count): \(dates) \(groups)")
                }
            }
        }
        return found
    }

    @Test func randomSequencesWriteTheSameRows() throws {
        var random = SplitMix64(state: Self.seed)
        let fast = try TestEngine.garage().store.engine
        let reference = ReferenceEngine()
        for sequence in 0..<Self.sequences {
            var history: [String] = []
            for engine in [fast, reference] as [any StorageEngine] {
                try engine.write("rules") { statements in _ = try statements.deleteAll(ofType: nil, now: Date()) }
            }
            for step in 1...30 {
                let write = Self.randomWrite(&random, step: step)
                history.append(write.description)
                // Whole seconds: equal modification dates order claims by key in both.
                let now = Date(timeIntervalSince1970: Double(step / 2))
                let context = Comment(rawValue: "sequence \(sequence) (seed \(Self.seed)):\n" + history.joined(separator: "\n"))
                let results = try [fast, reference].map { engine in
                    try engine.write("rules") { statements in try statements.transaction { try Self.make(write, on: statements, now: now) } }
                }
                try #require(results[0] == results[1], context)
                let rows = try [fast, reference].map { engine in try engine.write("rules") { try Self.rows($0) } }
                try #require(rows[0] == rows[1], context)
                let claims = try [fast, reference].map { engine in try engine.write("rules") { try Self.claimable($0, now: now) } }
                try #require(claims[0] == claims[1], context)
            }
        }
    }
}
