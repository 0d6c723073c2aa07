import Testing

/// The sync-cycle replay's own checks, on short logs whose answer is known: the stress test
/// relies on them both to catch a wrong deletion and to accept a right one whose log lines
/// interleave with the download's.
@Suite("Sync stress: the log replay", .firstPassOnly)
struct SyncCycleReplayTests {
    private func violations(_ lines: [String]) -> [String] {
        SyncCycleReplay(log: lines.joined(separator: "\n")).violations
    }

    @Test func aDownloadDeletingALiveDocumentIsAViolation() {
        let found = violations([
            "PARK e0 1.0 e0-1 1 create",
            "DLDELBEGIN dl 2.0 e0-1",
            "DLDELETE dl 3.0 e0-1 -",
            "PARK e0 4.0 e0-1 2 edit",
        ])
        #expect(found.count == 1)
        #expect(found.first?.contains("e0-1 was live locally") == true)
    }

    @Test func aDeletionLoggedAfterTheDownloadIsAccepted() {
        // The editor's deletion committed before deleteDownloaded, and was logged after it.
        #expect(violations([
            "PARK e0 1.0 e0-1 1 create",
            "DLDELBEGIN dl 2.0 e0-1",
            "DLDELETE dl 3.0 e0-1 -",
            "DELETE e0 4.0 e0-1 1",
            "PARK e0 5.0 e0-1 2 recreate",
        ]) == [])
    }

    @Test func anEditThenADeletionDuringTheDownloadIsAccepted() {
        // The stress test's seed 20261124 once logged this: an edit and a deletion between
        // DLDELBEGIN and DLDELETE, then a re-creation. The tombstone was in force.
        #expect(violations([
            "PARK e0 1.0 e0-1 1 recreate",
            "DLDELBEGIN dl 2.0 e0-1",
            "PARK e0 2.5 e0-1 2 edit",
            "DELETE e0 2.7 e0-1 2",
            "DLDELETE dl 3.0 e0-1 -",
            "PARK e0 4.0 e0-1 3 recreate",
        ]) == [])
    }

    @Test func aDeletionOnlyAfterALaterParkDoesNotExcuseTheDownload() {
        // The first event logged after DLDELETE may have committed before it; a later one can't.
        let found = violations([
            "PARK e0 1.0 e0-1 1 create",
            "DLDELBEGIN dl 2.0 e0-1",
            "DLDELETE dl 3.0 e0-1 -",
            "PARK e0 4.0 e0-1 2 edit",
            "DELETE e0 5.0 e0-1 2",
        ])
        #expect(found.count == 1)
    }
}
