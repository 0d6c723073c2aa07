import Foundation
import GarageLite
import Testing

/// Overwrites the root page of the object table of the store at `path` (an interior page of its
/// b-tree, given a few thousand rows) with bytes that are no page at all, once its log is
/// checkpointed into the file: a store SQLite finds damaged in the middle.
func overwriteObjectTableRootPage(of path: String) throws {
    // (A released garage's last connection may still be closing, checkpointing its log.)
    let database = try SQLiteFile(path, busyTimeout: 10)
    try database.checkpoint()
    let pageSize = try database.int("PRAGMA page_size") ?? 0
    let rootPage = try database.int("SELECT rootpage FROM sqlite_master WHERE name = 'garage_object'") ?? 0
    try database.close()
    let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    let fileSize = try file.seekToEnd()
    try #require(pageSize > 0 && rootPage > 1 && UInt64(rootPage * pageSize) <= fileSize)
    try file.seek(toOffset: UInt64((rootPage - 1) * pageSize))
    try file.write(contentsOf: Data(repeating: 0xFF, count: pageSize))
    try file.close()
}

/// Damages two rows of the store at `path` as the parity tests' damaged store has them: the row
/// `invalidJSON` holds JSON cut short, and `textDate` a creation date that is text.
func damageForParity(_ path: String, invalidJSON: ObjectKey, textDate: ObjectKey) throws {
    let file = try SQLiteFile(path)
    _ = try file.execute("UPDATE garage_object SET data = '{\"id\": 2, ' WHERE type = ? AND identifier = ?",
                         [invalidJSON.typeName, invalidJSON.identifier])
    _ = try file.execute("UPDATE garage_object SET creationDate = 'yesterday' WHERE type = ? AND identifier = ?",
                         [textDate.typeName, textDate.identifier])
    try file.close()
}

/// Writes `bytes` at `offset` of the file at `path`, below SQLite (a field of its header, say);
/// returns the bytes they replaced. Everything must be in the main file already (a closed store,
/// or one whose log is checkpointed).
@discardableResult
func overwrite(_ path: String, at offset: UInt64, with bytes: [UInt8]) throws -> [UInt8] {
    let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? file.close() }
    try file.seek(toOffset: offset)
    let replaced = [UInt8](try file.read(upToCount: bytes.count) ?? Data())
    try file.seek(toOffset: offset)
    try file.write(contentsOf: Data(bytes))
    return replaced
}
