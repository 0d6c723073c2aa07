import ArgumentParser
import Crypto
import Foundation
import GarageLite
import GarageLitePostgres

/// The store a command works on, and its key.
struct StoreOptions: ParsableArguments {
    @Argument(help: "The store file, or a PostgreSQL garage's URL (postgres://user@host:port/database?schema=garage).",
              completion: .file())
    var store: String

    /// Whether the store is a PostgreSQL garage (a `postgres://` URL) rather than a file.
    var isPostgres: Bool { store.hasPrefix("postgres://") || store.hasPrefix("postgresql://") }

    /// The garage at ``store``, opened with `encryptionKey`: a file, or a PostgreSQL schema,
    /// which must hold a garage unless `creating`.
    func open(encryptionKey: StoreKey?, creating: Bool) throws -> Garage {
        guard isPostgres else { return try Garage(path: store, encryptionKey: encryptionKey) }
        var options = PostgresGarageOptions()
        options.createsSchema = creating
        return try Garage(postgresURL: store, options: options, encryptionKey: encryptionKey)
    }

    @Option(name: .long, help: ArgumentHelp(
        "A file holding the store's passphrase (or base64:KEY). Default: the GARAGE_KEY environment variable.",
        valueName: "path"))
    var keyFile: String?

    /// The key from --key-file or GARAGE_KEY, or `nil`.
    func key() throws -> StoreKey? {
        try KeySource.key(file: keyFile, variable: "GARAGE_KEY", what: "the store's key")
    }

    /// Fails with `missingStore` unless a file is at the path (a PostgreSQL garage passes: its
    /// server says whether it can be opened).
    func requireFile() throws {
        if isPostgres { return }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: store, isDirectory: &isFolder) else {
            throw Failure(.missingStore, "no store at \(store): the file does not exist")
        }
        if isFolder.boolValue { throw Failure(.notAStore, "\(store) is a folder, not a store file") }
    }

    /// The store, opened for reading only: the command changes nothing in it.
    func openForReading() throws -> Garage {
        try openForReadingUpgraded().garage
    }

    /// The store, opened for reading only, and the format version it has when it is older than
    /// this tool's (`nil` otherwise).
    ///
    /// A store of an older format can't be read before it is upgraded, which would change it:
    /// it is copied (with its log) to a temporary folder, and the copy is upgraded and read.
    func openForReadingUpgraded() throws -> (garage: Garage, upgradedFrom: Int?) {
        // A PostgreSQL schema is read as it is: no read-only mode, and no upgrade to copy.
        if isPostgres { return (try open(encryptionKey: try key(), creating: false), nil) }
        try requireFile()
        do {
            return (try Garage.readOnly(path: store, encryptionKey: try key()), nil)
        } catch GarageError.cannotOpenStore(let path, let reason) {
            // The header's version is the store's when no log holds a newer one: this is a store
            // that must be upgraded (a log never brings a version down).
            guard let version = Self.headerVersion(of: store), version < Garage.formatVersion else {
                throw GarageError.cannotOpenStore(path: path, reason: reason)
            }
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("garage-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            TemporaryFolders.remove(folder)
            let copy = folder.appendingPathComponent("store").path
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: store + suffix) {
                try FileManager.default.copyItem(atPath: store + suffix, toPath: copy + suffix)
            }
            let garage = try Garage(path: copy, encryptionKey: try key())
            Output.error("garage: \(store) is in format version \(version); reading an upgraded copy (the store is unchanged)")
            return (garage, version)
        }
    }

    /// The format version in the header of the SQLite file at `path` (its `user_version`), or
    /// `nil` when it is not an SQLite file. The log may hold a newer one.
    static func headerVersion(of path: String) -> Int? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 100), header.count == 100,
              header.prefix(16) == Data("SQLite format 3\0".utf8) else { return nil }
        return header[60..<64].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The store, opened for writing; it must exist unless `creating`.
    func openForWriting(creating: Bool = false) throws -> Garage {
        if !creating { try requireFile() }
        return try open(encryptionKey: try key(), creating: creating)
    }
}

/// The temporary folders of upgraded copies, removed when the tool exits.
enum TemporaryFolders {
    private static let folders = Protected<[URL]>([])

    static func remove(_ folder: URL) {
        let isFirst = folders.write { folders in
            folders.append(folder)
            return folders.count == 1
        }
        if isFirst { atexit { TemporaryFolders.removeAll() } }
    }

    static func removeAll() {
        for folder in folders.read({ $0 }) { try? FileManager.default.removeItem(at: folder) }
    }
}

/// Where keys come from: a file, or an environment variable; never the command line, where
/// other users of the machine and the shell's history would see them.
enum KeySource {
    static func key(file: String?, variable: String, what: String) throws -> StoreKey? {
        let text: String
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw Failure(.key, "can't read \(what) from \(file)")
            }
            text = String(decoding: data, as: UTF8.self)
        } else if let value = ProcessInfo.processInfo.environment[variable] {
            text = value
        } else {
            return nil
        }
        var secret = Substring(text)
        while secret.last == "\n" || secret.last == "\r" { secret = secret.dropLast() }
        guard !secret.isEmpty else { throw Failure(.key, "\(what) is empty") }
        if secret.hasPrefix("base64:") {
            guard let bytes = Data(base64Encoded: String(secret.dropFirst("base64:".count))), bytes.count == 32 else {
                throw Failure(.key, "\(what) starts with base64: but is not 32 bytes in base64")
            }
            return .key(SymmetricKey(data: bytes))
        }
        return .passphrase(String(secret))
    }
}

/// `--json`, on every command that reads.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON, for scripts, instead of text.")
    var json = false
}
