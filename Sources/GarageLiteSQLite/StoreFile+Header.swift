import Foundation
import GRDBSQLite
import GarageLiteCore

// The fields of an SQLite file's header that SQLite misreads when they are damaged: it doesn't
// call them damage, it takes the file for something else (one it may only read, one it must
// refuse as "not a database", one whose pages hold less). Opening a store and checking it
// (`SQLiteConnection.fileProblems`) read them here, so that both name the same byte.
extension StoreFile {
    /// The first 100 bytes of the database file `connection` reads (its `main` database), read
    /// through SQLite's own descriptor of the file (see `headerBytes(path:)` for why not one
    /// of ours); `nil` for a database in memory, or when the read fails (the checks that follow
    /// read the same page, and report that).
    package static func header(of connection: OpaquePointer) -> [UInt8]? {
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let read = file.pointee.pMethods?.pointee.xRead else { return nil }
        var header = [UInt8](repeating: 0, count: 100)
        guard header.withUnsafeMutableBytes({ read(file, $0.baseAddress, 100, 0) }) == SQLITE_OK else { return nil }
        return header
    }

    /// The application id of `header` (bytes 68 to 71, big-endian, as all its fields).
    package static func applicationID(_ header: [UInt8]) -> Int32 {
        Int32(bitPattern: header[68..<72].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    /// What is wrong with the fields of `header` that never change in a store's life, as a
    /// reason of ``GarageError/damagedStore(path:operation:reason:)`` (which byte holds what, what
    /// SQLite would make of it, and how to repair it when one byte can), or `nil` when they
    /// hold what SQLite writes.
    ///
    /// - parameter isGarageStore: Whether the file is a GarageLite store (its application id),
    ///   whose pages have no reserved bytes: SQLite itself accepts any count that leaves a page
    ///   480 bytes, since some of its extensions reserve some.
    package static func headerDamage(_ header: [UInt8], isGarageStore: Bool) -> String? {
        let pageSize = Int(header[16]) << 8 | Int(header[17])
        if pageSize != 1, !(512...32_768).contains(pageSize) || pageSize & (pageSize - 1) != 0 {
            return "bytes 16 and 17 of its header (the size of its pages) read \(pageSize), which is no page size (SQLite "
                + "writes a power of two from 512 to 32768, or 1 for 65536): SQLite can't find the file's pages"
        }
        for offset in [18, 19] where !(1...2).contains(header[offset]) {
            let value = header[offset]
            let name = offset == 18 ? "SQLite's write version" : "SQLite's read version"
            let effect = switch (offset, value) {
            case (18, 3...): "SQLite would open the file for reading only, and refuse every write to it as a write to a "
                + "read-only database"
            case (19, 3...): "SQLite refuses the file as not a database"
            default: "SQLite's file format has no such version"
            }
            // The other byte of the pair says which: 1 and 1 (rollback journal), 2 and 2 (a
            // store in WAL mode, as every garage's).
            let other = header[offset == 18 ? 19 : 18]
            let repair = (1...2).contains(other) ? other : 2
            return "byte \(offset) of its header (\(name)) is \(value), where SQLite writes 1 (rollback journal) or 2 "
                + "(write-ahead log): \(effect); if that byte alone was changed, writing \(repair) back at offset \(offset) "
                + "repairs the file"
        }
        if isGarageStore, header[20] != 0 {
            return "byte 20 of its header (the bytes each page keeps unused at its end) is \(header[20]), where every "
                + "GarageLite store has 0: SQLite would read every page \(header[20]) bytes short, take the rows at their "
                + "ends for damage, and could write over them; if that byte alone was changed, writing 0 back at offset 20 "
                + "repairs the file"
        }
        if Array(header[21..<24]) != [64, 32, 32] {
            return "bytes 21 to 23 of its header (SQLite's payload fractions) are \(header[21]), \(header[22]), "
                + "\(header[23]), where SQLite writes 64, 32, 32: SQLite refuses the file as not a database; if those bytes "
                + "alone were changed, writing 64, 32, 32 back at offset 21 repairs the file"
        }
        let schemaFormat = header[44..<48].reduce(0) { $0 << 8 | Int($1) }
        if schemaFormat > 4 {
            return "bytes 44 to 47 of its header (SQLite's schema format) read \(schemaFormat), where SQLite writes 1 to 4: "
                + "SQLite refuses the file as of an unsupported format; if those bytes alone were changed, writing 4 back "
                + "(0, 0, 0, 4 at offset 44) repairs the file"
        }
        let encoding = header[56..<60].reduce(0) { $0 << 8 | Int($1) }
        if isGarageStore, encoding != 1 {
            return "bytes 56 to 59 of its header (the text encoding) read \(encoding), where every GarageLite store has 1 "
                + "(UTF-8): SQLite would read its text in another encoding, and its schema as damaged; if those bytes alone "
                + "were changed, writing 1 back (0, 0, 0, 1 at offset 56) repairs the file"
        }
        return nil
    }
}
