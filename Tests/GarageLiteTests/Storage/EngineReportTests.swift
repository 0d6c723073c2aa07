import Foundation
import Testing
@testable import GarageLite

/// Issue 45: the reports an engine answers in its own query (counts, identifiers, types, stamps,
/// references, claims, held rows, statistics, pages of records, the rows of a rekey, the checks
/// of `check()` and `collectGarbage()`) and the writes it makes in its own statements (a type
/// renamed, rows imported and inserted, data replaced) give what the boundary's defaults give on
/// the reference engine, which implements the primitives only. Random stores (live rows and
/// tombstones of every status, claims, failed attempts, encrypted data, invalid JSON, reference
/// lists valid, dangling and damaged) are written row by row into both.
///
/// `GARAGE_REPORT_STORES=2000 swift test --filter EngineReportTests` tries more stores (default
/// 60, 20 on PostgreSQL).
@Suite("Each engine's reports and writes give what the defaults give",
       .disabled(if: TestEngine.isReference, "the reference engine is what the test compares with"))
struct EngineReportTests {
    static let stores = ProcessInfo.processInfo.environment["GARAGE_REPORT_STORES"].flatMap { Int($0) }
        ?? (TestEngine.isPostgres ? 20 : 60)

    static let types = ["Note", "Tag"]
    static let identifiers = ["a", "b", "c", "d"]
    static let keys = types.flatMap { type in identifiers.map { ObjectKey(typeName: type, identifier: $0) } }
    static let datas: [(String, Bool)] = [
        (#"{"v":1}"#, false), (#"{"v":"é"}"#, false), ("{not json", false), ("", false), ("AQxyz", true), ("AQabcdef", true),
    ]
    static let referenceLists = [
        "[]", #"[["Tag","a"]]"#, #"[["Note","b"],["Tag","c"]]"#, #"[["Tag","zz"]]"#, #"[["Memo","a"]]"#,
        "nope", "{}", #"[["Tag"]]"#, #"[["Note","a"],5]"#,
    ]

    /// A random row of `key`, modified at `second` (each row at its own: orders by date are total).
    static func randomRow(_ key: ObjectKey, second: Int, _ random: inout SplitMix64) -> StoredRow {
        let (data, isEncrypted) = datas.randomElement(using: &random)!
        var row = StoredRow(
            key: key, data: data, isEncrypted: isEncrypted, syncStatus: SyncStatus.allCases.randomElement(using: &random)!,
            creationDate: Date(timeIntervalSince1970: 0), modificationDate: Date(timeIntervalSince1970: Double(second)),
            revision: Int64.random(in: 1...3, using: &random), isRoot: Bool.random(using: &random),
            references: Int.random(in: 0..<3, using: &random) == 0 ? referenceLists.randomElement(using: &random)! : referenceLists[Int.random(in: 0..<3, using: &random)])
        row.isDeleted = Int.random(in: 0..<4, using: &random) == 0
        if row.isDeleted { row.references = ReferenceList.empty }
        if Int.random(in: 0..<4, using: &random) == 0 {
            row.claim = "claim \(second % 2)"
            row.claimedAt = Date(timeIntervalSince1970: Double(second))
        }
        row.attempts = Int64.random(in: 0...3, using: &random)
        if row.attempts > 0 { row.lastError = "refused \(row.attempts)" }
        if Bool.random(using: &random) { row.retryAt = Date(timeIntervalSince1970: Double(Int.random(in: 0...40, using: &random))) }
        row.isRemote = Bool.random(using: &random)
        if Bool.random(using: &random) { row.base = #"{"v":0}"# }
        if Bool.random(using: &random) { row.serverVersion = "v\(second)" }
        return row
    }

    /// What `statements` report of their rows, as text.
    static func reports(_ statements: any RowStatements) throws -> [String] {
        var found: [String] = []
        func add(_ name: String, _ value: Any) { found.append("\(name): \(value)") }
        add("count", try statements.count())
        add("types", try statements.types().sorted())
        add("claimed", try statements.claimedRows().map { "\($0.key) \($0.claim)" })
        add("statistics", try statements.typeStatistics(maximumAttempts: 2).map { entry in
            let statuses = entry.countsByStatus.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" }
            return "\(entry.typeName) \(entry.count) \(statuses) claims \(entry.openClaims) held \(entry.heldObjects) "
                + "tombstones \(entry.tombstones) oldest \(entry.oldestUnsyncedChange?.timeIntervalSince1970 ?? -1) "
                + "size \(entry.dataSize) encrypted \(entry.encryptedCount)"
        })
        add("encrypted", try [true, false].map { try statements.countRows(encrypted: $0) })
        for encrypted in [true, false] {
            var page: [String] = []
            var after: ObjectKey?
            repeat {
                let rows = try statements.rows(encrypted: encrypted, after: after, limit: 3)
                page += rows.map { "\($0.key) \($0.data) \($0.base ?? "-")" }
                after = rows.count == 3 ? rows.last?.key : nil
            } while after != nil
            add("rows encrypted \(encrypted)", page)
        }
        for status in SyncStatus.allCases { add("per type \(status)", try statements.countsPerType(status: status).sorted { $0.key < $1.key }) }
        for type in types + ["Memo"] {
            add("\(type) count", try statements.count(ofType: type))
            add("\(type) identifiers", try statements.identifiers(ofType: type))
            add("\(type) stamps", try statements.stamps(ofType: type, identifiers: nil).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" })
            add("\(type) stamps b c", try statements.stamps(ofType: type, identifiers: ["b", "c", "x"]).sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" })
            add("\(type) held", try statements.heldRows(ofType: type, maximumAttempts: 2).map { "\($0.identifier) \($0.attempts) \($0.lastError ?? "-")" })
            add("\(type) references", try statements.references(toType: type, identifier: nil).map { "\($0.to)<-\($0.from)" })
            add("\(type) references a", try statements.references(toType: type, identifier: "a").map { "\($0.to)<-\($0.from)" })
            add("\(type) rows", try statements.rows(ofType: type, for: .all).map(\.key))
            // Oldest modification first: rows modified at the same instant are in the engine's order.
            let dates = try statements.stamps(ofType: type, identifiers: nil).mapValues { $0.modificationDate ?? -1 }
            func byDate(_ identifiers: [String]) -> String {
                let inOrder = zip(identifiers, identifiers.dropFirst()).allSatisfy { dates[$0.0]! <= dates[$0.1]! }
                return "\(inOrder) \(identifiers.sorted { (dates[$0]!, $0) < (dates[$1]!, $1) })"
            }
            for status in SyncStatus.allCases {
                add("\(type) \(status) count", try statements.count(ofType: type, status: status))
                add("\(type) \(status) identifiers", byDate(try statements.identifiers(ofType: type, status: status)))
                add("\(type) \(status) rows", byDate(try statements.rows(ofType: type, status: status, for: .all).map { try $0.get().key.identifier }))
            }
            var pages: [[ObjectKey]] = []
            var after: String?
            repeat {
                let page = try statements.rows(ofType: type, after: after, limit: 2, for: .all).map(\.key)
                pages.append(page)
                after = page.count == 2 ? page.last?.identifier : nil
            } while after != nil
            add("\(type) pages", pages)
        }
        for type in [nil] + types.map(Optional.some) {
            var pages: [[ObjectKey]] = []
            var after: ObjectKey?
            repeat {
                let page = try statements.records(ofType: type, after: after, limit: 3).map(\.key)
                pages.append(page)
                after = page.count == 3 ? page.last : nil
            } while after != nil
            add("records \(type ?? "all")", pages)
        }
        for key in keys { add("\(key) referenced", try statements.isReferenced(key)) }
        for limit in [2, 100] {
            let (problems, truncated) = try statements.integrityProblems(limit: limit)
            add("problems \(limit)", "\(problems) \(truncated)")
        }
        add("dangling", try statements.danglingReferences(limit: nil).map { "\($0.from)->\($0.to)" })
        add("dangling 1", try statements.danglingReferences(limit: 1).map { "\($0.from)->\($0.to)" })
        let invalid = try statements.firstInvalidReferenceList()
        add("first invalid list", invalid.map { "\($0.key) \($0.reason)" } ?? "none")
        if invalid == nil {
            add("unreachable", try statements.unreachableRows(extraRoots: []))
            add("unreachable from Tag(b)", try statements.unreachableRows(extraRoots: [ObjectKey(typeName: "Tag", identifier: "b")]))
        }
        return found
    }

    /// Requires the engine's lines (`fast`) to be the reference's, naming the first that differs.
    static func requireSame(_ fast: [String], _ reference: [String], _ context: String) throws {
        for (line, (fastLine, referenceLine)) in zip(fast, reference).enumerated() {
            try #require(fastLine == referenceLine, "\(context), line \(line)")
        }
        try #require(fast.count == reference.count, "\(context)")
    }

    /// Writes a random store into `engines`, the same in each.
    static func fill(_ engines: [any StorageEngine], _ random: inout SplitMix64) throws {
        var rows: [StoredRow] = []
        for (second, key) in keys.enumerated() where Int.random(in: 0..<5, using: &random) > 0 {
            rows.append(randomRow(key, second: second, &random))
        }
        for engine in engines {
            try engine.write("reports") { statements in
                try statements.transaction {
                    _ = try statements.deleteAll(ofType: nil, now: Date())
                    for row in rows { try statements.putRow(row) }
                }
            }
        }
    }

    @Test func randomStoresReportTheSame() throws {
        var random = SplitMix64(state: 0x5265_706F_7274)
        let engines: [any StorageEngine] = [try TestEngine.garage().store.engine, ReferenceEngine()]
        for store in 0..<Self.stores {
            try Self.fill(engines, &random)
            let reports = try engines.map { engine in try engine.read("reports") { try Self.reports($0) } }
            try Self.requireSame(reports[0], reports[1], "store \(store)")
        }
    }

    /// The writes an engine may make in statements of its own.
    enum Write: CaseIterable {
        case renameNoteToMemo, renameNoteToTag, importRows, insertRecords, replaceData, replaceMetadata, setEncryptionCount
    }

    static func make(_ write: Write, on statements: any RowWriteStatements) throws -> String {
        switch write {
        case .renameNoteToMemo:
            return "\(try statements.renameType(from: "Note", to: "Memo", reseal: nil))"
        case .renameNoteToTag:
            return "\(try statements.renameType(from: "Note", to: "Tag", reseal: nil))"
        case .importRows:
            return "\(try keys.map { key in try statements.insertImported(key, ImportedRow(data: #"{"imported":1}"#, isEncrypted: false, syncStatus: .notSynced, creationDate: Date(timeIntervalSince1970: 1), modificationDate: Date(timeIntervalSince1970: 2), references: #"[["Tag","a"]]"#, isRemote: true)) })"
        case .insertRecords:
            var row = StoredRow(key: keys[0], data: #"{"record":1}"#, isEncrypted: false, syncStatus: .synced,
                                creationDate: Date(timeIntervalSince1970: 3), modificationDate: Date(timeIntervalSince1970: 50),
                                revision: 4, isRoot: false, references: #"[["Note","a"]]"#, claim: "claim", claimedAt: Date(),
                                attempts: 2, lastError: "refused", isRemote: true, base: #"{"v":0}"#, serverVersion: "v9")
            return "\(try keys.map { key in row.key = key; return try statements.insertRecord(key, row) })"
        case .replaceData:
            return "\(try keys.map { key in try statements.replaceData(of: key, previous: "AQxyz", with: "Agnew", base: nil, isEncrypted: true) })"
        case .replaceMetadata:
            let first = try statements.replaceMetadata("fact", previous: nil, with: "one")
            let second = try statements.replaceMetadata("fact", previous: "two", with: "three")
            let third = try statements.replaceMetadata("fact", previous: "one", with: nil)
            try statements.setMetadata("other", "four")
            return "\(first) \(second) \(third) \(try statements.metadata("fact") ?? "-") \(try statements.metadata("other") ?? "-")"
        case .setEncryptionCount:
            try statements.setEncryptionCount(7)
            return "\(try statements.encryptionCount())"
        }
    }

    @Test(arguments: Write.allCases)
    func writesLeaveTheSameRows(_ write: Write) throws {
        var random = SplitMix64(state: 0x5772_6974_65)
        let engines: [any StorageEngine] = [try TestEngine.garage().store.engine, ReferenceEngine()]
        for store in 0..<Self.stores / 2 {
            try Self.fill(engines, &random)
            let results = try engines.map { engine in
                try engine.write("reports") { statements in try statements.transaction { try Self.make(write, on: statements) } }
            }
            try #require(results[0] == results[1], "store \(store), \(write)")
            let rows = try engines.map { engine in try engine.write("reports") { try RowRulesTests.rows($0) } }
            try Self.requireSame(rows[0], rows[1], "store \(store), \(write)")
            let reports = try engines.map { engine in try engine.read("reports") { try Self.reports($0) } }
            try Self.requireSame(reports[0], reports[1], "store \(store), \(write)")
        }
    }
}
