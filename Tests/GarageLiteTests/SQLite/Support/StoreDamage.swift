import Foundation
import GRDB
import Testing

/// Overwrites the root page of the object table of the store at `path` (an interior page of its
/// b-tree, given a few thousand rows) with bytes that are no page at all, once its log is
/// checkpointed into the file: a store SQLite finds damaged in the middle.
func overwriteObjectTableRootPage(of path: String) throws {
    // (A released garage's last connection may still be closing, checkpointing its log.)
    var configuration = Configuration()
    configuration.busyMode = .timeout(10)
    let (pageSize, rootPage) = try DatabaseQueue(path: path, configuration: configuration).writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        return (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0,
                try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'garage_object'") ?? 0)
    }
    let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    let fileSize = try file.seekToEnd()
    try #require(pageSize > 0 && rootPage > 1 && UInt64(rootPage * pageSize) <= fileSize)
    try file.seek(toOffset: UInt64((rootPage - 1) * pageSize))
    try file.write(contentsOf: Data(repeating: 0xFF, count: pageSize))
    try file.close()
}
