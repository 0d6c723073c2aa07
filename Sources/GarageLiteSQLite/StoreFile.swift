import Foundation
import GRDB
import GRDBSQLite
import GarageLiteCore

/// Checks on a store file made before SQLite opens it, so that a file that is not a
/// GarageLite store, or one of a newer format, is refused without being touched:
/// opening it as a `DatabasePool` would switch it to WAL mode.
package enum StoreFile {
    private static let sqliteMagic = Array("SQLite format 3\0".utf8)

    /// - parameter supportedVersion: The newest format version the caller reads.
    package static func checkBeforeOpening(path: String, supportedVersion: Int = Schema.formatVersion) throws {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty, !fileManager.fileExists(atPath: folder) {
                throw GarageError.cannotOpenStore(
                    path: path, reason: "the folder \(folder) does not exist; create it first")
            }
            return
        }
        guard !isDirectory.boolValue else {
            throw GarageError.cannotOpenStore(path: path, reason: "it is a folder, not a file")
        }
        let size = (try? fileManager.attributesOfItem(atPath: path))?[.size] as? Int ?? 0
        if size == 0 { return } // an empty file becomes a new store
        guard access(path, R_OK) == 0 else {
            throw GarageError.cannotOpenStore(path: path, reason: "the file cannot be read (check its permissions)")
        }
        let header = try headerBytes(path: path)
        // The header fields are big-endian.
        let userVersion = header[60..<64].reduce(0) { $0 << 8 | Int($1) }
        let applicationID = Self.applicationID(header)
        // In WAL mode the header may lag behind the latest commit, so it only decides what is
        // certain; Schema.migrate checks the rest.
        if applicationID != 0, applicationID != Schema.applicationID {
            throw GarageError.notAGarageStore(path: path, reason: "it is an SQLite database of another application")
        }
        if applicationID == 0, userVersion != 0 {
            throw GarageError.notAGarageStore(path: path, reason: "it is an SQLite database of another application")
        }
        // Fields no commit changes, which SQLite would misread rather than call damage (a write
        // version it doesn't know makes the file read-only to it): `check()` reads them too.
        if let damage = headerDamage(header, isGarageStore: applicationID == Schema.applicationID) {
            throw GarageError.damagedStore(path: path, operation: "open the store", reason: damage)
        }
        if applicationID == Schema.applicationID, userVersion > supportedVersion {
            throw GarageError.newerFormatVersion(
                path: path, version: userVersion, supportedVersion: supportedVersion)
        }
        if applicationID == 0 {
            // Either another application's database, or a store whose creation is still in
            // its WAL file. Only SQLite can tell, and reading does not change the file.
            try checkWithSQLite(path: path)
        }
    }

    /// The header of the SQLite file at `path` (its first 100 bytes), read through SQLite's own
    /// descriptor of the file, opened as immutable: without locks, the `-wal` and `-shm` files,
    /// or a change to the file.
    ///
    /// Not with a file handle of our own: closing any descriptor of a file drops every POSIX
    /// lock the process holds on it, SQLite's included, and a garage already open on the file
    /// would then lose its writes to another process that took the file for unused (one that
    /// closes it checkpoints and removes the `-wal` file). SQLite keeps its descriptor open,
    /// and closes it later, while another connection of the process holds a lock on the file.
    private static func headerBytes(path: String) throws -> [UInt8] {
        var connection: OpaquePointer?
        defer { sqlite3_close_v2(connection) }
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
        guard sqlite3_open_v2(immutableURI(path: path), &connection, flags, nil) == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            throw GarageError.cannotOpenStore(path: path, reason: "SQLite can't open the file (\(message))")
        }
        var file: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(connection, "main", SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK,
              let file, let read = file.pointee.pMethods?.pointee.xRead else {
            throw GarageError.cannotOpenStore(path: path, reason: "SQLite can't read the file")
        }
        var header = [UInt8](repeating: 0, count: 100)
        let result = header.withUnsafeMutableBytes { read(file, $0.baseAddress, 100, 0) }
        // A short read (SQLITE_IOERR_SHORT_READ, a macro Swift doesn't import) fills the rest
        // with zeros: the magic then fails.
        let shortRead = SQLITE_IOERR | (2 << 8)
        guard result == SQLITE_OK || result == shortRead else {
            throw GarageError.cannotOpenStore(path: path, reason: "the file cannot be read (SQLite error \(result))")
        }
        guard result == SQLITE_OK, Array(header[0..<16]) == sqliteMagic else {
            throw GarageError.notAGarageStore(path: path, reason: "it is not an SQLite database")
        }
        return header
    }

    private static func checkWithSQLite(path: String) throws {
        let (applicationID, tableCount): (Int32, Int)
        do {
            do {
                // Read-only, so that closing the connection can't checkpoint another
                // application's WAL into its database file.
                (applicationID, tableCount) = try identify(path: path, readonly: true)
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_READONLY_ROLLBACK {
                // A process was killed in a transaction on this file and left a hot journal,
                // which a read-only connection can't roll back: typically while it created the
                // store (the switch of a new file to WAL mode writes its first page under a
                // rollback journal). Any connection that may write rolls the journal back
                // first, restoring the file's last commit, as SQLite does for every application.
                (applicationID, tableCount) = try identify(path: path, readonly: false)
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw error // another connection is creating the store: SQLiteEngine.open tries again
        } catch {
            throw SQLiteEngine.openingError(error, path: path)
        }
        if applicationID != Schema.applicationID, tableCount > 0 {
            throw GarageError.notAGarageStore(path: path, reason: "it is an SQLite database of another application")
        }
    }

    private static func identify(path: String, readonly: Bool) throws -> (applicationID: Int32, tableCount: Int) {
        var configuration = Configuration()
        configuration.readonly = readonly
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        return try queue.read { db in
            (try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0)
        }
    }
}

// Stores that can only be read: a file, or a folder, that this process can't write.
extension StoreFile {
    /// Why the existing store at `path` can only be read, or `nil` when SQLite can write it:
    /// write the file, and create the `-wal` and `-shm` files next to it.
    ///
    /// - throws: ``GarageError/cannotOpenStore(path:reason:)`` when there is no store to read
    ///   (the file is missing or empty) and none can be created.
    package static func readOnlyReason(path: String) throws -> String? {
        let fileManager = FileManager.default
        let folder = self.folder(of: path)
        let isEmpty = ((try? fileManager.attributesOfItem(atPath: path))?[.size] as? Int ?? 0) == 0
        guard fileManager.fileExists(atPath: path), !isEmpty else {
            if let problem = writeProblem(folder) {
                throw GarageError.cannotOpenStore(
                    path: path, reason: "the folder \(folder) can't be written (\(problem)), so no store can be created there")
            }
            if fileManager.fileExists(atPath: path), let problem = writeProblem(path) {
                throw GarageError.cannotOpenStore(
                    path: path, reason: "the file is empty and can't be written (\(problem)), so it can't become a store")
            }
            return nil
        }
        if let problem = writeProblem(path) {
            return "the file can't be written: \(problem)"
        }
        if let problem = writeProblem(folder) {
            return "its folder \(folder) can't be written: \(problem)"
        }
        return nil
    }

    /// Whether SQLite may create files next to the store at `path`.
    package static func isFolderWritable(path: String) -> Bool {
        writeProblem(folder(of: path)) == nil
    }

    /// An SQLite URI that opens the store at `path` as immutable: read without locks, and
    /// without the `-wal` and `-shm` files.
    package static func immutableURI(path: String) -> String {
        // `%`, `?` and `#` have a meaning in a URI; SQLite decodes the %-escapes of its path.
        var escaped = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        // `file://` + an absolute path: an empty authority, so that a path beginning with `//`
        // is not read as one.
        return (path.hasPrefix("/") ? "file://" : "file:") + "\(escaped)?immutable=1"
    }

    private static func folder(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    /// Why this process can't write `path`, or `nil` when it can. `access(2)` answers for root
    /// too: an immutable file (`chattr +i`) or a read-only mount can't be written by anyone.
    private static func writeProblem(_ path: String) -> String? {
        guard access(path, W_OK) != 0 else { return nil }
        return String(cString: strerror(errno))
    }
}

// A full volume: what an I/O error means when SQLite can't say.
extension StoreFile {
    /// Whether the volume that holds the store at `path` is full: less than 1 MiB left that
    /// this process may use. SQLite reports a write that found the disk full as
    /// `SQLITE_FULL`, but a truncation, or a file it could not create, as a plain I/O error
    /// (`SQLITE_IOERR_TRUNCATE`, `SQLITE_CANTOPEN`): when the volume is full, that is why.
    package static func isVolumeFull(path: String) -> Bool {
        let folder = folder(of: path)
        if let space = availableSpaceOverrides.read({ overrides in
            overrides.first { folder.hasPrefix($0.key) }?.value
        }) {
            return space < minimumSpace
        }
        var status = statvfs()
        guard statvfs(folder, &status) == 0 else { return false }
        return UInt64(status.f_bavail) * UInt64(status.f_frsize) < minimumSpace
    }

    private static let minimumSpace: UInt64 = 1 << 20

    /// The space left on the volumes of the folders that start with a key, as tests pretend
    /// it to be (the fault-injecting file system's tests fill no real disk).
    package static let availableSpaceOverrides = Protected<[String: UInt64]>([:])
}
