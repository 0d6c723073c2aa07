import Foundation
import Testing
@testable import GarageLite

// How SQLite runs the statements the garage depends on being fast: ranges of the primary key
// and of the indexes, no scan of the table, no sort. Moved from the behaviour suite (issue 25):
// each is an extension of the suite it belongs to.

extension StreamingTests {
    @Test func pagesAreRangesOfThePrimaryKey() throws {
        let garage = try Garage.inMemory()
        let plan = try garage.store.sql.queryPlan("""
            SELECT * FROM garage_object WHERE type = 'T' AND identifier > 'x'
            ORDER BY identifier LIMIT 10
            """).joined(separator: "; ")
        #expect(plan.contains("(type=? AND identifier>?)"))
        #expect(!plan.contains("TEMP B-TREE"))
    }
}

extension ClaimsTests {
    @Test func jobQueriesUseTheIndex() throws {
        let garage = try Garage.inMemory()
        _ = try notes(garage, count: 3)
        try garage.park(Note(text: "n", tags: [], syncStatus: .synced))
        try garage.setSyncStatus(.synced, for: Memo(id: "m1", text: ""))
        let counts = try garage.syncStatusCounts()
        #expect(counts == ["Memo": [.notSynced: 2, .synced: 1], "Note": [.synced: 1]])
        #expect(try garage.syncStatusCounts([.notSynced]) == ["Memo": [.notSynced: 2]])
        #expect(try garage.identifiers(of: Memo.self, withStatus: .notSynced) == ["m0", "m2"])
        let sql = try garage.store.sql
        let plans = try ["SELECT COUNT(*) FROM garage_object WHERE syncStatus = 1 AND type = 'Memo'",
                         "SELECT type, COUNT(*) FROM garage_object WHERE syncStatus = 1 GROUP BY type",
                         "SELECT identifier FROM garage_object WHERE syncStatus = 1 AND type = 'M' ORDER BY modificationDate",
                         "SELECT * FROM garage_object WHERE claim IS NOT NULL AND claimedAt < 5"].map { statement in
            try sql.queryPlan(statement).joined(separator: "; ")
        }
        #expect(plans[0].contains("USING COVERING INDEX garage_object_sync (syncStatus=? AND type=?)"))
        #expect(plans[1].contains("USING COVERING INDEX garage_object_sync (syncStatus=?)"))
        #expect(plans[2].contains("garage_object_sync (syncStatus=? AND type=?)") && !plans[2].contains("TEMP B-TREE"))
        #expect(plans[3].contains("garage_object_claim"))
        for plan in plans {
            #expect(!plan.hasPrefix("SCAN garage_object"), "\(plan)")
        }
    }
}

extension DeleteRuleTests {
    /// The lookup is a range of the index's primary key, and the check that the referenced
    /// object exists a search of the object table's key: no scan, no sort.
    @Test func theLookupIsARangeOfAnIndex() throws {
        let garage = try Garage.inMemory()
        try garage.park(Self.notebook())
        let database = try garage.store.sql
        let plans = try [(SQLiteConnection.referencesToObjectSQL, ["DNote", "n1"] as SQLiteFile.Arguments),
                         (SQLiteConnection.referencesToTypeSQL, ["DNote"] as SQLiteFile.Arguments)].map { sql, arguments in
            try database.queryPlan(sql, arguments).joined(separator: "; ")
        }
        for plan in plans {
            #expect(plan.contains("SEARCH garage_reference USING PRIMARY KEY"), "\(plan)")
            #expect(plan.contains("SEARCH garage_object USING INDEX sqlite_autoindex_garage_object_1"), "\(plan)")
            #expect(!plan.contains("SCAN") && !plan.contains("TEMP B-TREE"), "\(plan)")
        }
    }
}

extension IntegrityTests {
    @Test func theWalkFollowsReferencesThroughThePrimaryKey() throws {
        let garage = try Garage.inMemory()
        let plan = try garage.store.sql.queryPlan(Store.unreachableRowsSQL, ["[]"])
        #expect(plan.contains { $0.contains("SEARCH referenced USING INDEX sqlite_autoindex_garage_object_1 (type=? AND identifier=?)") },
                "\(plan)")
    }
}

extension GarageObjectsTests {
    @Test func theTableIsKeyedByTypeAndIdentifier() throws {
        let garage = try Garage.inMemory()
        let keyColumns = try garage.store.sql.strings("SELECT name FROM pragma_table_info('garage_object') WHERE pk > 0 ORDER BY pk")
        #expect(keyColumns == ["type", "identifier"])
    }
}
