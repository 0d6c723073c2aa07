import ArgumentParser
import Crypto
import Foundation
import GarageLite

/// The store a command works on, and its key.
struct StoreOptions: ParsableArguments {
    @Argument(help: "The store file.", completion: .file())
    var store: String

    @Option(name: .long, help: ArgumentHelp(
        "A file holding the store's passphrase (or base64:KEY). Default: the GARAGE_KEY environment variable.",
        valueName: "path"))
    var keyFile: String?

    /// The key from --key-file or GARAGE_KEY, or `nil`.
    func key() throws -> StoreKey? {
        try KeySource.key(file: keyFile, variable: "GARAGE_KEY", what: "the store's key")
    }

    /// Fails with `missingStore` unless a file is at the path.
    func requireFile() throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: store, isDirectory: &isFolder) else {
            throw Failure(.missingStore, "no store at \(store): the file does not exist")
        }
        if isFolder.boolValue { throw Failure(.notAStore, "\(store) is a folder, not a store file") }
    }

    /// The store, opened for reading only: the command changes nothing in it.
    func openForReading() throws -> Garage {
        try requireFile()
        return try Garage.readOnly(path: store, encryptionKey: try key())
    }

    /// The store, opened for writing; it must exist unless `creating`.
    func openForWriting(creating: Bool = false) throws -> Garage {
        if !creating { try requireFile() }
        return try Garage(path: store, encryptionKey: try key())
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
