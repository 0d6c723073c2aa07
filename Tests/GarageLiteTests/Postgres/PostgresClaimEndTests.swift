import Foundation
@testable import GarageLite
@testable import GarageLitePostgres
import Testing

/// A claim's end on PostgreSQL stores its rows unread when nothing wrote them since the claim
/// (`endClaimsIfUnchanged`, guarded by each row's `xmin`): the rules end the rows as the claim
/// left them. These tests hold that path to the one that reads the rows first.
extension PostgresEngineTests {
    struct StampedMemo: Codable, Identifiable, Syncable, Sendable {
        var id: String
        var text: String
        var syncStatus: SyncStatus = .notSynced
    }

    struct Rejection: Error, CustomStringConvertible {
        var description: String { "HTTP 422" }
    }

    /// A schema whose six memos are all claimable: two after a rejected upload (one failed
    /// attempt each), four edited after a completed one.
    private static func schemaWithClaimableMemos() throws -> (url: String, garage: Garage) {
        let (url, _) = newSchema()
        let garage = try Garage(postgresURL: url)
        try garage.parkAll((0..<6).map { StampedMemo(id: "m\($0)", text: "first") })
        let first = try garage.claim(StampedMemo.self, limit: 10)
        try garage.complete(first, rejected: ["m0": Rejection(), "m1": Rejection()], retryAfter: -1)
        try garage.parkAll((2..<6).map { StampedMemo(id: "m\($0)", text: "second") })
        return (url, garage)
    }

    /// The engine of the garage at `url`, below the store.
    private static func openEngine(_ url: String) throws -> PostgresEngine {
        let (configuration, schema) = try PostgresURL.parse(url)
        var options = PostgresGarageOptions()
        options.createsSchema = false
        return try PostgresEngine.open(configuration: configuration, schema: schema, options: options)
    }

    /// Every row of `garage`'s memos, by identifier.
    private static func memoRows(_ url: String) throws -> [String: StoredRow] {
        let engine = try openEngine(url)
        let rows = try engine.read("test") { try $0.records(ofType: "StampedMemo", after: nil, limit: 100) }
        return Dictionary(uniqueKeysWithValues: try rows.map { try ($0.key.identifier, $0.get()) })
    }

    @Test(arguments: ["complete", "complete rejecting two", "release", "release failed"])
    func aClaimsEndWithoutReadsEndsEachRowAsTheReadingEndDoes(_ ending: String) throws {
        func end(_ garage: Garage, _ claim: Claim<StampedMemo>) throws -> ClaimReport {
            switch ending {
            case "complete": return try garage.complete(claim)
            case "complete rejecting two": return try garage.complete(claim, rejected: ["m1": Rejection(), "m3": Rejection()])
            case "release": return try garage.release(claim)
            default: return try garage.release(claim, retryAfter: 30, error: Rejection())
            }
        }
        let (unreadURL, unreadGarage) = try Self.schemaWithClaimableMemos()
        let (readURL, readGarage) = try Self.schemaWithClaimableMemos()
        let unread = try unreadGarage.claim(StampedMemo.self, limit: 10)
        var read = try readGarage.claim(StampedMemo.self, limit: 10)
        #expect(unread.count == 6 && read.count == 6, "\(unread.identifiers) \(read.identifiers) \(unread.failures)")
        #expect(unread.claimedRows.count == 6 && unread.claimedRows.allSatisfy { $0.rowVersion != nil },
                "PostgreSQL gives every claimed row its version")
        // The rows the claim stored are the rows the rule says it left (what the end starts from).
        let claimedRows = try Self.memoRows(unreadURL)
        for row in unread.claimedRows {
            let stored = try #require(claimedRows[row.key.identifier])
            #expect(Self.syncColumns(stored) == Self.syncColumns(row), "\(row.key)")
        }
        read.claimedRows = []     // no versions: the end reads its rows

        let unreadReport = try end(unreadGarage, unread)
        let readReport = try end(readGarage, read)
        #expect(unreadReport == readReport)
        #expect(unreadReport.lost.isEmpty && unreadReport.deleted.isEmpty)
        let unreadRows = try Self.memoRows(unreadURL), readRows = try Self.memoRows(readURL)
        #expect(unreadRows.keys.sorted() == readRows.keys.sorted())
        for (identifier, row) in unreadRows {
            let other = try #require(readRows[identifier])
            #expect(Self.syncColumns(row) == Self.syncColumns(other), "\(identifier)")
            #expect(row.claim == nil && row.claimedAt == nil)
        }
    }

    /// The columns a claim and its end write, and what they depend on; a retry date to the second.
    private static func syncColumns(_ row: StoredRow) -> [String] {
        [row.data, "\(row.revision)", "\(row.syncStatus)", row.claim == nil ? "-" : "claimed", "\(row.attempts)",
         // Whether a retry date is set, not its value: the two ends ran at different instants, and a
         // value rounded against the clock differed across a boundary on a loaded machine.
         row.lastError ?? "-", row.retryAt == nil ? "-" : "retry set", row.base ?? "-",
         row.serverVersion ?? "-", "\(row.isRemote)", "\(row.isDeleted)"]
    }

    /// The rows of `claim` completed by the write without reads alone, with the server's version
    /// `v2`: the keys it stored.
    private static func completeWithoutReads(_ claim: Claim<StampedMemo>, _ url: String) throws -> Set<ObjectKey> {
        let engine = try openEngine(url)
        let ended = claim.claimedRows.map {
            RowRules.endingClaim($0, status: .synced, completed: true, failure: nil, version: "v2")
        }
        return try engine.write("test") { try $0.endClaimsIfUnchanged(ended) }
    }

    /// A claim nothing wrote since ends with the write without reads alone, every row at once.
    @Test func aClaimNothingWroteEndsWithoutReads() throws {
        let (url, garage) = try Self.schemaWithClaimableMemos()
        let claim = try garage.claim(StampedMemo.self, limit: 10)
        let stored = try Self.completeWithoutReads(claim, url)
        #expect(stored == Set(claim.keys))
        let rows = try Self.memoRows(url)
        #expect(rows.count == 6 && rows.values.allSatisfy {
            $0.syncStatus == .synced && $0.claim == nil && $0.serverVersion == "v2" && $0.attempts == 0 && $0.base == nil
        })
        // Ended: a second end finds no row under the claim.
        #expect(try garage.complete(claim).lost.count == 6)
    }

    /// The end without reads takes the schema's lock shared, as a claim's end does: while a
    /// writer holds it, the end waits, then reports the store busy; once free, it ends.
    @Test func anEndWithoutReadsWaitsForTheWriteLock() throws {
        let (url, schema) = Self.newSchema()
        var options = PostgresGarageOptions()
        options.busyTimeout = 0.5
        let garage = try Garage(postgresURL: url, options: options)
        try garage.parkAll([StampedMemo(id: "a", text: "a"), StampedMemo(id: "b", text: "b")])
        let claim = try garage.claim(StampedMemo.self, limit: 10)
        #expect(claim.claimedRows.count == 2)
        let release = try Self.holdInPsql("SELECT pg_advisory_xact_lock(hashtext('GarageLite write \(schema)'));")
        let error = try #require(throws: GarageError.self) { try garage.complete(claim) }
        release()
        guard case .storeBusy = error else {
            Issue.record("expected storeBusy, got \(error)")
            return
        }
        #expect(try Self.memoRows(url).values.allSatisfy { $0.claim == claim.id }, "nothing ended")
        #expect(try garage.complete(claim).synced.sorted() == ["a", "b"])
    }

    /// A row written during the claim (an edit) makes the end read every row: the write without
    /// reads stores none of them, and the end that follows tells the edit from the others.
    @Test func aClaimsEndReadsItsRowsWhenSomethingWroteOne() throws {
        let (url, garage) = try Self.schemaWithClaimableMemos()
        let claim = try garage.claim(StampedMemo.self, limit: 10)
        try garage.park(StampedMemo(id: "m4", text: "during the upload"))
        let stored = try Self.completeWithoutReads(claim, url)
        #expect(stored.isEmpty, "all of them or none")
        #expect(try Self.memoRows(url).values.allSatisfy { $0.claim == claim.id }, "every row is still under the claim")

        let report = try garage.complete(claim)
        #expect(report.notSynced == ["m4"])
        #expect(Set(report.synced) == ["m0", "m1", "m2", "m3", "m5"])
        #expect(try garage.retrieve(StampedMemo.self, identifier: "m4")?.text == "during the upload")
    }

    /// Two ends of one claim at once (two garages, one store): each row ends once, in one of
    /// them; the other finds it no longer under the claim.
    @Test func twoEndsOfOneClaimAtOnceEndEachRowOnce() async throws {
        let (url, garage) = try Self.schemaWithClaimableMemos()
        let other = try Garage(postgresURL: url)
        let claim = try await garage.claim(StampedMemo.self, limit: 10)
        async let first = garage.complete(claim)
        async let second = other.complete(claim)
        let reports = try await [first, second]
        for identifier in claim.identifiers {
            #expect(reports.filter { $0.synced.contains(identifier) }.count == 1, "\(identifier): \(reports)")
            #expect(reports.filter { $0.lost.contains(identifier) }.count == 1, "\(identifier): \(reports)")
        }
        #expect(try Self.memoRows(url).values.allSatisfy { $0.syncStatus == .synced && $0.claim == nil })
    }
}
