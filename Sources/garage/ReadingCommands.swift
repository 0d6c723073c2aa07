import ArgumentParser
import Foundation
import GarageLite
import GarageToolSupport

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a store holds, per type, and what its sync jobs have left to do.",
        discussion: """
            Prints the store's format version, its file sizes (the store and its write-ahead log), \
            whether it is encrypted, and for each type: its objects, their count per sync status, \
            the open claims of sync jobs, the objects held back after failed uploads, the tombstones \
            (deletions not uploaded yet) and the date of the oldest change not uploaded.
            """)

    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    struct JSON: Encodable {
        struct TypeJSON: Encodable {
            var type: String
            var objects: Int
            var byStatus: [String: Int]
            var openClaims: Int
            var held: Int
            var tombstones: Int
            var oldestUnsyncedChange: Date?
            var dataBytes: Int
            var encrypted: Int
        }
        var path: String
        var formatVersion: Int
        var fileBytes: Int
        var logBytes: Int
        var isEncrypted: Bool
        var objects: Int
        var types: [TypeJSON]
        /// The indexes declared for queries, as `Type(field, field)`.
        var indexes: [String]
    }

    func run() throws {
        try reportingFailures {
            let (garage, upgradedFrom) = try store.openForReadingUpgraded()
            var statistics = try garage.statistics()
            // Of the store itself, not of an upgraded copy.
            if let upgradedFrom { statistics.formatVersion = upgradedFrom }
            if upgradedFrom != nil {
                func size(_ path: String) -> Int {
                    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
                }
                statistics.fileSize = size(store.store)
                statistics.logSize = size(store.store + "-wal")
            }
            let indexes = try garage.indexes().map(\.description)
            if output.json {
                try Output.json(JSON(
                    path: store.store, formatVersion: statistics.formatVersion, fileBytes: statistics.fileSize,
                    logBytes: statistics.logSize, isEncrypted: statistics.isEncrypted,
                    objects: statistics.types.reduce(0) { $0 + $1.count },
                    types: statistics.types.map { type in
                        JSON.TypeJSON(
                            type: type.typeName, objects: type.count,
                            byStatus: Dictionary(uniqueKeysWithValues: SyncStatus.allCases.map { ($0.name, type.countsByStatus[$0, default: 0]) }),
                            openClaims: type.openClaims, held: type.heldObjects, tombstones: type.tombstones,
                            oldestUnsyncedChange: type.oldestUnsyncedChange, dataBytes: type.dataSize,
                            encrypted: type.encryptedCount)
                    }, indexes: indexes))
                return
            }
            Output.line("Store:      \(store.store)")
            Output.line("Format:     version \(statistics.formatVersion)")
            Output.line(store.isPostgres ? "Size:       \(statistics.fileSize) bytes (its tables and indexes on the server)"
                : "Size:       \(statistics.fileSize) bytes, log \(statistics.logSize) bytes")
            let encrypted = statistics.types.reduce(0) { $0 + $1.encryptedCount }
            Output.line("Encrypted:  " + (statistics.isEncrypted ? "yes, with a key"
                : encrypted > 0 ? "no key; \(encrypted) objects encrypted by the app's DataEncryptionDelegate" : "no"))
            Output.line("Objects:    \(statistics.types.reduce(0) { $0 + $1.count }) of \(statistics.types.count) types")
            if !indexes.isEmpty { Output.line("Indexes:    \(indexes.joined(separator: ", "))") }
            guard !statistics.types.isEmpty else { return }
            Output.line()
            Output.table(
                ["TYPE", "OBJECTS", "UNDETERMINED", "NOT SYNCED", "SYNCING", "SYNCED", "CLAIMED", "HELD", "TOMBSTONES",
                 "OLDEST UNSYNCED"],
                statistics.types.map { type in
                    [type.typeName, "\(type.count)"]
                        + SyncStatus.allCases.map { "\(type.countsByStatus[$0, default: 0])" }
                        + ["\(type.openClaims)", "\(type.heldObjects)", "\(type.tombstones)",
                           type.oldestUnsyncedChange.map(Output.date) ?? "-"]
                },
                rightAligned: Set(1...8))
        }
    }
}

struct ListObjects: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the objects of a store, one line each.",
        discussion: """
            Each line has the object's type, identifier, sync status, revision, modification date and \
            the size of its stored data, in type and identifier order. Tombstones (deleted objects a \
            sync job has yet to upload) are listed only with --deleted.
            """)

    @OptionGroup var store: StoreOptions
    @Option(name: .shortAndLong, help: "Only the objects of this type.")
    var type: String?
    @Option(name: .shortAndLong, help: "Only the objects with this sync status: undetermined, notSynced, syncing or synced.")
    var status: String?
    @Option(name: .shortAndLong, help: "At most this many objects.")
    var limit: Int?
    @Flag(help: "List tombstones too.")
    var deleted = false
    @Option(name: .long, help: ArgumentHelp(
        "Only the objects (of --type) this condition holds for, e.g. 'tags contains work and not (done == true)'.",
        discussion: "Conditions: PATH == | != | < | <= | > | >= VALUE, PATH contains VALUE, PATH hasPrefix TEXT, "
            + "PATH containsText TEXT, PATH is null, status == STATUS; combined with and, or, not and parentheses. "
            + "PATH is a coding key, or keys joined by dots (address.city); VALUE is \"text\", a number, true, false, "
            + "null, or a word (a string).", valueName: "condition"))
    var `where`: String?
    @Option(name: .long, help: ArgumentHelp(
        "Order by this property (property:desc descending; 'modified': the modification date); repeat for ties.",
        valueName: "property"))
    var sort: [String] = []
    @Option(name: .long, help: ArgumentHelp(
        "Only the objects (of --type) whose text index holds every one of these words (word* for a prefix), the most "
            + "relevant first after the orders of --sort.", valueName: "words"))
    var search: String?
    @OptionGroup var output: OutputOptions

    /// Whether the command asks a query (of --type) rather than listing the store's rows.
    private var isQuery: Bool { `where` != nil || !sort.isEmpty || search != nil }

    struct Line: Encodable {
        var type: String
        var identifier: String
        var status: String
        var revision: Int64
        var modificationDate: Date
        var bytes: Int
        var isDeleted: Bool
    }

    func validate() throws {
        if let status, SyncStatus(name: status) == nil {
            throw ValidationError("unknown status '\(status)': use undetermined, notSynced, syncing or synced")
        }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if isQuery {
            guard type != nil else { throw ValidationError("--where, --sort and --search query the objects of one type: add --type") }
            guard !deleted else { throw ValidationError("--where, --sort and --search find objects, not tombstones: leave out --deleted") }
        }
        if let condition = `where` {
            do {
                _ = try WhereExpression.parse(condition)
            } catch {
                throw ValidationError("--where: \(error)")
            }
        }
    }

    /// The query of `--where` and `--sort`, with `--status` and `--limit`.
    private func query(ofType type: String) throws -> Query<ObjectRecord> {
        var query = Query(recordsOf: type)
        if let condition = `where` { query = query.filter(try WhereExpression.parse(condition)) }
        if let status = status.flatMap(SyncStatus.init(name:)) { query = query.filter(.syncStatus(status)) }
        for key in sort {
            let descending = key.hasSuffix(":desc")
            let name = descending ? String(key.dropLast(5)) : key.hasSuffix(":asc") ? String(key.dropLast(4)) : key
            let order: QuerySort.Order = descending ? .descending : .ascending
            query = name == "modified" ? query.sortedByModificationDate(order)
                : query.sorted(by: Field(path: name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)), order)
        }
        if let search { query = query.search(search) }
        if let limit { query = query.limit(limit) }
        return query
    }

    /// Without the app's types the tool can't check a path: it warns (on standard error) about
    /// each property of `--where` and `--sort` that no object of the type holds, likely a
    /// misspelling, which would match nothing.
    private func warnAboutMissingProperties(_ garage: Garage, type: String) throws {
        guard try !garage.records(matching: Query(recordsOf: type).limit(1)).isEmpty else { return }
        let query = try query(ofType: type)
        var warned: Set<Field> = []
        for field in RowQuery(typeName: type, predicate: query.predicate, sortOrders: query.sortOrders).fields
        where warned.insert(field).inserted {
            if try garage.records(matching: Query(recordsOf: type).filter(field != nil).limit(1)).isEmpty {
                Output.error("warning: no \(type) object holds a property \(field): is it misspelled? (it matches nothing)")
            }
        }
    }

    func run() throws {
        try reportingFailures {
            let garage = try store.openForReading()
            let wanted = status.flatMap(SyncStatus.init(name:))
            var lines: [Line] = []
            var after: ObjectKey?
            if let type, isQuery {
                try warnAboutMissingProperties(garage, type: type)
                lines = try garage.records(matching: query(ofType: type)).map { record in
                    Line(type: record.typeName, identifier: record.identifier, status: record.syncStatus.name,
                         revision: record.revision, modificationDate: record.modificationDate,
                         bytes: record.json.utf8.count, isDeleted: record.isDeleted)
                }
            }
            scan: while !isQuery {
                let page = try garage.records(ofType: type, after: after)
                guard let last = page.last else { break }
                after = last.key
                for record in page where (deleted || !record.isDeleted) && (wanted == nil || record.syncStatus == wanted) {
                    lines.append(Line(type: record.typeName, identifier: record.identifier, status: record.syncStatus.name,
                                      revision: record.revision, modificationDate: record.modificationDate,
                                      bytes: record.json.utf8.count, isDeleted: record.isDeleted))
                    if let limit, lines.count >= limit { break scan }
                }
            }
            if output.json {
                try Output.json(lines)
            } else if !lines.isEmpty {
                Output.table(["TYPE", "IDENTIFIER", "STATUS", "REVISION", "MODIFIED", "SIZE"], lines.map { line in
                    [line.type, line.identifier, line.isDeleted ? "deleted (\(line.status))" : line.status,
                     "\(line.revision)", Output.date(line.modificationDate), "\(line.bytes)"]
                }, rightAligned: [3, 5])
            }
        }
    }
}

struct Show: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show one object: its JSON, its metadata and its references.",
        discussion: """
            With --resolve, each object it references is inlined where its JSON names it (a string \
            equal to the referenced identifier, or GarageStorage's {"gs_type", "gs_identifier"} stub), \
            recursively, as the app reads the graph; an object already on the path stays a reference.
            """)

    @OptionGroup var store: StoreOptions
    @Argument(help: "The object's type name.")
    var type: String
    @Argument(help: "The object's identifier.")
    var identifier: String
    @Flag(help: "Inline the objects it references.")
    var resolve = false
    @OptionGroup var output: OutputOptions

    struct JSON: Encodable {
        struct Reference: Encodable {
            var type: String
            var identifier: String
            var exists: Bool
        }
        var type: String
        var identifier: String
        var status: String
        var revision: Int64
        var creationDate: Date
        var modificationDate: Date
        var isRoot: Bool
        var isDeleted: Bool
        var claimDate: Date?
        var attempts: Int
        var lastError: String?
        var retryDate: Date?
        var references: [Reference]
        var object: JSONValue?
        /// The stored ciphertext, when the tool can't decrypt it.
        var ciphertext: String?
    }

    func run() throws {
        try reportingFailures {
            let garage = try store.openForReading()
            let key = ObjectKey(typeName: type, identifier: identifier)
            guard let record = try garage.record(key) else {
                throw Failure(.notFound, "no object \(key) in \(store.store)")
            }
            var references: [JSON.Reference] = []
            for reference in record.references {
                references.append(JSON.Reference(type: reference.typeName, identifier: reference.identifier,
                                                 exists: try garage.record(reference).map { !$0.isDeleted } ?? false))
            }
            var object = record.isDeleted || record.isEncrypted ? nil : try JSONValue(text: record.json, naming: key)
            if resolve, let unresolved = object {
                object = try Resolver(garage: garage).resolve(unresolved, references: record.references, path: [key])
            }
            let shown = JSON(
                type: type, identifier: identifier, status: record.syncStatus.name, revision: record.revision,
                creationDate: record.creationDate, modificationDate: record.modificationDate, isRoot: record.isRoot,
                isDeleted: record.isDeleted, claimDate: record.claimDate, attempts: record.attempts,
                lastError: record.lastError, retryDate: record.retryDate, references: references, object: object,
                ciphertext: record.isEncrypted ? record.json : nil)
            if output.json {
                try Output.json(shown)
                return
            }
            Output.line("\(key)\(record.isDeleted ? " (deleted: a tombstone)" : "")")
            Output.line("  status:    \(record.syncStatus.name)\(record.claimDate.map { ", claimed \(Output.date($0))" } ?? "")")
            Output.line("  revision:  \(record.revision)")
            Output.line("  created:   \(Output.date(record.creationDate))")
            Output.line("  modified:  \(Output.date(record.modificationDate))")
            Output.line("  root:      \(record.isRoot ? "yes (parked directly)" : "no (parked only as a reference)")")
            if record.attempts > 0 {
                Output.line("  uploads:   \(record.attempts) failed\(record.lastError.map { ", last: \($0)" } ?? "")"
                    + (record.retryDate.map { ", retry after \(Output.date($0))" } ?? ""))
            }
            if references.isEmpty {
                Output.line("  references: none")
            } else {
                Output.line("  references:")
                for reference in references {
                    Output.line("    \(reference.type)(\(reference.identifier))\(reference.exists ? "" : "  (missing)")")
                }
            }
            if let object {
                Output.line()
                Output.line(try object.prettyText())
            } else if record.isEncrypted {
                Output.line()
                Output.line("(encrypted by the app's DataEncryptionDelegate, which this tool doesn't have: \(record.json.utf8.count) bytes)")
            }
        }
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a store's integrity; exit status 1 when there are problems.",
        discussion: """
            Runs SQLite's check of the file (a postgres:// store: reads every row of its schema), then \
            GarageLite's: reference lists, JSON, references to objects that don't exist, and (with the \
            key) encrypted objects that don't decrypt. A store too damaged to open (a header SQLite \
            would misread, say) is a problem found: the report names the damage.
            """)

    @OptionGroup var store: StoreOptions
    @Option(help: "Stop after this many problems.")
    var maximumProblems = Garage.defaultMaximumProblems
    @OptionGroup var output: OutputOptions

    struct JSON: Encodable {
        var isOK: Bool
        var isTruncated: Bool
        var problems: [String]
    }

    /// The store's report; for a store file too damaged to open, the damage that keeps it closed:
    /// that is the check's finding, not a failure to check.
    private func report() throws -> IntegrityReport {
        let garage: Garage
        do {
            garage = try store.openForReading()
        } catch GarageError.damagedStore(_, _, let reason) where !store.isPostgres {
            return IntegrityReport(problems: [.sqlite(reason)])
        }
        return try garage.check(maximumProblems: maximumProblems)
    }

    func run() throws {
        try reportingFailures {
            let report = try self.report()
            if output.json {
                try Output.json(JSON(isOK: report.isOK, isTruncated: report.isTruncated, problems: report.problems.map(\.description)))
            } else {
                Output.line(report.description)
            }
            if !report.isOK { throw ExitCode(Failure.Kind.problemsFound.rawValue) }
        }
    }
}
