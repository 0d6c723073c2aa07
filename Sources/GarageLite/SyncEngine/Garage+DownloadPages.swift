import Foundation
import GarageLiteCore

// The sync engine's download pages: each applied with the cursor after it, in one transaction
// (over the store's `applyingDownloadPage`), so that a page is applied once, whenever the
// process is killed.
extension Garage {
    /// One page of the sync engine's download, in one transaction: `edits` parked with their
    /// server `versions` (see ``parkDownloaded(_:versions:ownRevisions:onConflict:)``), the
    /// objects `deletions` names deleted (see ``deleteDownloaded(_:identifiers:onConflict:)-116er``),
    /// and the engine's `settings` stored with them (the cursor after the page: a page is applied
    /// once, whenever the process is killed, and the next download asks after it). Returns the edits' report, then the deletions'.
    /// `rebasing`: the page is part of a rebase, which sends every object again: one whose
    /// local change is based on the version downloaded is no news, and keeps its change
    /// without a conflict. `alsoParking`: records parked with the page (the rebase's notes of
    /// what it received). `expectedVersions`: a deletion applies only to a row still based on
    /// that server version.
    func applyDownloadPage<T: Codable & SendableMetatype>(
        edits: [T], versions: [String?], ownRevisions: [ObjectKey: Int64], deletions: [String], onConflict: ConflictResolution<T>,
        settings: [(key: SettingsKey<SyncEngineSettings, String?>, value: String?)], rebasing: Bool = false,
        alsoParking: [(record: any Encodable & Sendable, identifier: String)] = [], expectedVersions: [String: String?]? = nil
    ) async throws -> (edits: DownloadReport, deletions: DownloadReport) {
        try await run(sealingWithCurrentKey {
            let configuration = self.configuration()
            var page = Store.DownloadPage(pending: self.pendingChanges())
            if !edits.isEmpty {
                page.edits = try self.downloadedRows(edits, versions: versions, ownRevisions: ownRevisions, onConflict: onConflict)
                if rebasing, let edits = page.edits {
                    let decide = edits.resolve, versionOf = Dictionary(zip(edits.roots, versions), uniquingKeysWith: { $1 })
                    page.edits?.resolve = { key, local, downloaded in
                        if let row = try local.statements.rowOrTombstone(key, for: .metadata), let version = versionOf[key] ?? nil,
                           row.serverVersion == version {
                            return .unchanged
                        }
                        return try decide(key, local, downloaded)
                    }
                }
            }
            if !deletions.isEmpty {
                page.deletions = try self.deletedOnServer(T.self, deletions, onConflict)
                if let expectedVersions {
                    let typeName = try self.storedTypeName(T.self)
                    page.deletions?.expectedVersions = Dictionary(expectedVersions.map { (ObjectKey(typeName: typeName, identifier: $0.key), $0.value) },
                                                                  uniquingKeysWith: { $1 })
                }
            }
            var records = alsoParking
            for (key, value) in settings { records.append((try key.setting.row(for: value), key.setting.id)) }
            for record in records {
                let graph = configuration.encoder()
                _ = try graph.encodeRoot(record.record, identifier: record.identifier)
                page.alsoWriting += try graph.rows.map { try configuration.encryption.seal($0) }
            }
            let hasEdits = page.edits != nil, hasDeletions = page.deletions != nil, count = edits.count + deletions.count
            return StoreCall(self.store.applyingDownloadPage(page, operation: "apply a downloaded page of \(count) changes")
                .map { reports in
                    (edits: hasEdits ? reports[0] : DownloadReport(),
                     deletions: hasDeletions ? reports[hasEdits ? 1 : 0] : DownloadReport())
                })
        })
    }

}
