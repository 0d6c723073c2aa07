import ArgumentParser
import Foundation
import GarageLite
import GarageToolSupport

struct CollectGarbage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "List (or, with --apply, delete) the objects nothing leads to any more.",
        discussion: """
            An object parked only as a reference, that no chain of references from an object parked \
            directly leads to, is garbage. Without --apply this is a dry run: it lists them and \
            changes nothing. With --apply it deletes them, in one transaction.
            """)

    @OptionGroup var store: StoreOptions
    @Flag(help: "Delete them (the default is a dry run).")
    var apply = false
    @OptionGroup var output: OutputOptions

    struct JSON: Encodable {
        var isDryRun: Bool
        var objects: [[String]]
    }

    func run() throws {
        try reportingFailures {
            let garage = apply ? try store.openForWriting() : try store.openForReading()
            let report = try Progress.run(apply ? "collecting garbage" : "finding garbage") {
                try garage.collectGarbage(dryRun: !apply)
            }
            if output.json {
                try Output.json(JSON(isDryRun: report.isDryRun, objects: report.objects.map { [$0.typeName, $0.identifier] }))
            } else {
                Output.line(report.description)
            }
        }
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a store's objects to standard output, one JSON object per line.",
        discussion: """
            Each line holds an object's type, identifier, data (its JSON, as text, decrypted), sync \
            status, dates (seconds since 1970), revision, references, and whether it is a root, a \
            tombstone, or on the server; `garage import` reads it back, keeping all of it. The store \
            is read in pages of 1,000 objects: objects changed meanwhile are exported as they are \
            when their page is read.

              garage export app.garage > objects.jsonl
              garage import copy.garage < objects.jsonl
            """)

    @OptionGroup var store: StoreOptions
    @Option(name: .shortAndLong, help: "Only the objects of this type.")
    var type: String?

    func run() throws {
        try reportingFailures {
            let garage = try store.openForReading()
            let total = try garage.statistics().types.filter { type == nil || $0.typeName == type }
                .reduce(0) { $0 + $1.count + $1.tombstones }
            let progress = Progress("exporting", total: total)
            defer { progress.finish() }
            let encoder = ExportLine.encoder()
            var after: ObjectKey?
            while true {
                let page = try garage.records(ofType: type, after: after)
                guard let last = page.last else { break }
                after = last.key
                var text = ""
                for record in page { text += try ExportLine(record).text(encoder) + "\n" }
                FileHandle.standardOutput.write(Data(text.utf8))
                progress.advance(by: page.count)
            }
        }
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read objects from standard input, one JSON object per line, into a store.",
        discussion: """
            Reads what `garage export` writes: each line's type, identifier and data are required, \
            the rest is optional. Every line is checked before anything is written, then all are \
            written in one transaction: a line that can't be taken stops the import, names the line, \
            and writes nothing. An object the store has already is left as it is. The store is \
            created when it doesn't exist.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    struct JSON: Encodable {
        var imported: [String: Int]
        var alreadyInStore: [String: Int]
    }

    func run() throws {
        try reportingFailures {
            let input = FileHandle.standardInput
            let size = (try? input.seekToEnd()).map { size -> Int in
                try? input.seek(toOffset: 0)
                return Int(size)
            }
            let progress = Progress("importing", total: size)
            defer { progress.finish() }
            var records: [ObjectRecord] = []
            var lineOf: [ObjectKey: Int] = [:]
            let now = Date()
            var number = 0
            let decoder = JSONDecoder()
            for line in LineReader(input) {
                number += 1
                progress.advance(by: line.count + 1)
                if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }) {
                    continue
                }
                do {
                    let record = try decoder.decode(ExportLine.self, from: Data(line)).record(now: now)
                    if let first = lineOf[record.key] {
                        throw Failure(.refusedInput, "\(record.key) is on line \(first) already")
                    }
                    lineOf[record.key] = number
                    records.append(record)
                } catch {
                    throw Failure(.refusedInput, "line \(number) can't be imported (nothing was): \(Self.reason(error))")
                }
            }
            let existed = store.isPostgres || FileManager.default.fileExists(atPath: store.store)
            let report: RecordImportReport
            do {
                report = try store.openForWriting(creating: true).importRecords(records)
            } catch {
                // A store this import created holds nothing: it goes, so that a refused import
                // leaves no trace.
                if !existed {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.store + suffix) }
                }
                guard let refusal = (error as? GarageError)?.refusal, let line = lineOf[refusal.key] else { throw error }
                throw Failure(.refusedInput, "line \(line) can't be imported (nothing was): \(refusal.key): \(refusal.reason)")
            }
            if output.json {
                try Output.json(JSON(imported: report.imported, alreadyInStore: report.alreadyInGarage))
            } else {
                Output.line(report.description)
            }
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let failure as Failure: failure.message
        case let refusal as ExportLine.Refusal: refusal.message
        case DecodingError.keyNotFound(let key, _): "it has no \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context) where context.codingPath.isEmpty: "it is not a JSON object"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type"
        case DecodingError.dataCorrupted: "it is not a JSON object"
        default: String(describing: error)
        }
    }
}

/// The lines of a file, read in blocks, without their line feeds.
struct LineReader: Sequence, IteratorProtocol {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false

    init(_ handle: FileHandle) { self.handle = handle }

    mutating func next() -> [UInt8]? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                defer { start = newline + 1 }
                return Array(buffer[start..<newline])
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                return Array(buffer[start...])
            }
            buffer.removeFirst(start)
            start = 0
            let block = handle.readData(ofLength: 1 << 16)
            if block.isEmpty { atEnd = true } else { buffer.append(contentsOf: block) }
        }
    }
}

extension GarageError {
    /// The object a refused record names, and why it was refused.
    var refusal: (key: ObjectKey, reason: String)? {
        switch self {
        case let .invalidIdentifier(type, identifier, reason), let .corruptData(type, identifier, reason),
             let .encryptionFailed(type, identifier, reason):
            (ObjectKey(typeName: type, identifier: identifier), reason)
        default: nil
        }
    }
}

struct RenameType: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rename-type",
        abstract: "Move every object of one type name to another, as migrateAll does.",
        discussion: """
            For a type the app renamed: every object parked under OLD moves to NEW (one of NEW with the \
            same identifier is replaced), and references to them keep working. One transaction.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The type name the objects are stored under.")
    var old: String
    @Argument(help: "The type name to move them to.")
    var new: String
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if old.isEmpty || new.isEmpty { throw ValidationError("type names can't be empty") }
    }

    func run() throws {
        try reportingFailures {
            let moved = try store.openForWriting().migrateAll(fromOldClassName: old, toTypeName: new)
            if output.json {
                try Output.json(["moved": moved])
            } else {
                Output.line("Moved \(moved) object\(moved == 1 ? "" : "s") from \(old) to \(new).")
            }
        }
    }
}

struct ImportGarageStorage: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import-garagestorage",
        abstract: "Copy the objects of a GarageStorage (Core Data) store into a GarageLite store.",
        discussion: """
            SOURCE is GarageStorage's SQLite file; it is read from a copy and never changed. Each \
            object keeps its type, identifier, data, sync status and dates; an object the store has \
            already is left as it is. The store records what it took from SOURCE (by its Core Data \
            store UUID), so that importing it again takes none of those objects again, even those \
            deleted or renamed since: only the rows an earlier import could not take. The store is created when \
            it doesn't exist. Objects GarageStorage encrypted with a DataEncryptionDelegate stay \
            encrypted (and can't be checked here).
            """)

    @Argument(help: "The GarageStorage store file.", completion: .file())
    var source: String
    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    struct JSON: Encodable {
        var imported: [String: Int]
        var alreadyInStore: [String: Int]
        var alreadyImported: [String: Int]
        var encrypted: Int
        var failures: [String]
    }

    func run() throws {
        try reportingFailures {
            guard FileManager.default.fileExists(atPath: source) else {
                throw Failure(.missingStore, "no GarageStorage store at \(source): the file does not exist")
            }
            let existed = store.isPostgres || FileManager.default.fileExists(atPath: store.store)
            let report: ImportReport
            do {
                let garage = try store.openForWriting(creating: true)
                report = try Progress.run("importing") { try garage.importGarageStorageStore(at: URL(fileURLWithPath: source)) }
            } catch {
                // A store this import created holds nothing: it goes.
                if !existed {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.store + suffix) }
                }
                throw error
            }
            if output.json {
                try Output.json(JSON(imported: report.imported, alreadyInStore: report.alreadyInGarage,
                                     alreadyImported: report.alreadyImported, encrypted: report.encrypted,
                                     failures: report.failures.map(\.description)))
            } else {
                Output.line(report.description)
            }
        }
    }
}

struct Rekey: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encrypt a store, rotate its key, or decrypt it.",
        discussion: """
            The current key comes from --key-file or GARAGE_KEY, the new one from --new-key-file or \
            GARAGE_NEW_KEY; never from the command line. With a new key, every object is encrypted \
            again with a new data key (a plain store is encrypted). With --decrypt, every object is \
            decrypted and the store needs no key any more. Interrupted, it leaves a store that opens \
            with the new key: run it again to finish.
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("A file holding the new passphrase (or base64:KEY). Default: GARAGE_NEW_KEY.",
                               valueName: "path"))
    var newKeyFile: String?
    @Flag(help: "Decrypt the store instead.")
    var decrypt = false
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if decrypt, newKeyFile != nil || ProcessInfo.processInfo.environment["GARAGE_NEW_KEY"] != nil {
            throw ValidationError("give a new key (--new-key-file or GARAGE_NEW_KEY), or --decrypt, not both")
        }
    }

    func run() throws {
        try reportingFailures {
            let newKey = try KeySource.key(file: newKeyFile, variable: "GARAGE_NEW_KEY", what: "the new key")
            let count: Int
            let done: String
            if decrypt {
                guard try store.key() != nil else { throw Failure(.key, "decrypting needs the store's key (--key-file or GARAGE_KEY)") }
                let garage = try store.openForWriting()
                count = try Progress.run("decrypting") { try garage.decryptAllObjects() }
                done = "Decrypted"
            } else {
                guard let newKey else {
                    throw Failure(.key, "no new key: put it in a file (--new-key-file) or in GARAGE_NEW_KEY")
                }
                if try store.key() == nil {
                    // A plain store: opening it with the key encrypts it.
                    try store.requireFile()
                    let garage = try Progress.run("encrypting") { try store.open(encryptionKey: newKey, creating: false) }
                    count = try garage.statistics().types.reduce(0) { $0 + $1.count }
                    done = "Encrypted"
                } else {
                    let garage = try store.openForWriting()
                    count = try Progress.run("re-encrypting") { try garage.rekey(to: newKey) }
                    done = "Re-encrypted"
                }
            }
            if output.json {
                try Output.json(["objects": count])
            } else {
                Output.line("\(done) \(count) object\(count == 1 ? "" : "s").")
            }
        }
    }
}
