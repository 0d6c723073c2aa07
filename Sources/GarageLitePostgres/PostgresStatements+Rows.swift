import Foundation
import GarageLite
import NIOCore
import PostgresNIO

// The one reader of the object table's rows, and the reads of rows by key and by type.
extension PostgresStatements {
    // MARK: - Reading rows

    /// The columns of the object table, in the order ``readRow(_:)`` reads them.
    static let columns = """
        type, identifier, data, is_encrypted, sync_status, creation_date, modification_date, revision, is_root, refs, \
        claim, claimed_at, is_deleted, attempts, last_error, retry_at, base, server_version, is_remote, references_known
        """

    /// Reads a row of ``columns``. The schema types every column, and forbids NULL where a value
    /// belongs: a row that does not decode is unreadable (a column changed below the library).
    static func readRow(_ row: PostgresRow) -> RowRead {
        var cells = Cells(row)
        let type = (try? cells.text()) ?? "?"
        let identifier = (try? cells.text()) ?? "?"
        let key = ObjectKey(typeName: type, identifier: identifier)
        do {
            let data = try cells.text(), isEncrypted = try cells.bool(), statusValue = try cells.int8()
            guard let status = SyncStatus(rawValue: Int(statusValue)) else {
                return .unreadable(key, .corruptData(typeName: type, identifier: identifier,
                                                     reason: "unknown sync status \(statusValue)"))
            }
            let creationDate = try cells.float8(), modificationDate = try cells.float8(), revision = try cells.int8()
            let isRoot = try cells.bool(), references = try cells.text(), claim = try cells.optionalText()
            let claimedAt = try cells.optionalFloat8(), isDeleted = try cells.bool(), attempts = try cells.int8()
            let lastError = try cells.optionalText(), retryAt = try cells.optionalFloat8(), base = try cells.optionalText()
            let serverVersion = try cells.optionalText(), isRemote = try cells.bool(), referencesKnown = try cells.bool()
            var row = StoredRow(
                key: key, data: data, isEncrypted: isEncrypted, syncStatus: status,
                creationDate: Date(timeIntervalSince1970: creationDate), modificationDate: Date(timeIntervalSince1970: modificationDate),
                revision: revision, isRoot: isRoot, references: references, claim: claim,
                claimedAt: claimedAt.map(Date.init(timeIntervalSince1970:)), isDeleted: isDeleted, attempts: attempts,
                lastError: lastError, retryAt: retryAt.map(Date.init(timeIntervalSince1970:)), isRemote: isRemote, base: base,
                serverVersion: serverVersion)
            row.referencesKnown = referencesKnown
            // A claim's rows come with the xmin of the version it wrote (PostgresStatement.claimRows).
            if cells.hasMore { row.rowVersion = try cells.int8() }
            return .row(row)
        } catch {
            return .unreadable(key, .corruptData(typeName: type, identifier: identifier, reason: "a column can't be read (\(error))"))
        }
    }

    /// The cells of a row, read in order, each in the binary format: every answer postgres-nio
    /// asks for is binary, though a prepared statement's rows are labelled text (see
    /// ``PooledConnection``). Reading the bytes here, rather than through `PostgresCell.decode`,
    /// costs a fraction of it (a claim reads 19 cells of each of its rows, twice).
    struct Cells {
        private var cells: PostgresRow.Iterator

        init(_ row: PostgresRow) {
            cells = row.makeIterator()
            count = row.count
        }

        /// The row's cells, and how many were read.
        private let count: Int
        private var read = 0

        /// Whether a cell is left to read.
        var hasMore: Bool { read < count }

        /// Why a cell can't be read: its column, and what it holds.
        struct Unreadable: Error, CustomStringConvertible {
            var description: String
        }

        private mutating func next(_ type: PostgresDataType, _ expected: String) throws -> ByteBuffer? {
            guard let cell = cells.next() else { throw Unreadable(description: "a column is missing") }
            read += 1
            guard cell.dataType == type else {
                throw Unreadable(description: "\(cell.columnName) is \(cell.dataType), not \(expected)")
            }
            return cell.bytes
        }

        private mutating func value(_ type: PostgresDataType, _ expected: String) throws -> ByteBuffer {
            guard let bytes = try next(type, expected) else { throw Unreadable(description: "a \(expected) column is NULL") }
            return bytes
        }

        mutating func optionalText() throws -> String? {
            try next(.text, "text").map { String(buffer: $0) }
        }

        mutating func text() throws -> String {
            String(buffer: try value(.text, "text"))
        }

        mutating func int8() throws -> Int64 {
            let bytes = try value(.int8, "bigint")
            guard bytes.readableBytes == 8, let value = bytes.getInteger(at: bytes.readerIndex, as: Int64.self) else {
                throw Unreadable(description: "a bigint is not 8 bytes")
            }
            return value
        }

        mutating func optionalFloat8() throws -> Double? {
            guard let bytes = try next(.float8, "double precision") else { return nil }
            guard bytes.readableBytes == 8, let bits = bytes.getInteger(at: bytes.readerIndex, as: UInt64.self) else {
                throw Unreadable(description: "a double is not 8 bytes")
            }
            return Double(bitPattern: bits)
        }

        mutating func float8() throws -> Double {
            guard let value = try optionalFloat8() else { throw Unreadable(description: "a double precision column is NULL") }
            return value
        }

        mutating func bool() throws -> Bool {
            let bytes = try value(.bool, "boolean")
            guard bytes.readableBytes == 1, let byte = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else {
                throw Unreadable(description: "a boolean is not 1 byte")
            }
            return byte != 0
        }
    }

    func readRows(_ query: PostgresQuery) throws -> [RowRead] {
        try run(query).rows.map(Self.readRow)
    }

    func readRows(_ statement: PostgresStatement, _ binds: [PostgresData]) throws -> [RowRead] {
        try run(statement, binds).map(Self.readRow)
    }

    private func readRow(_ statement: PostgresStatement, _ key: ObjectKey) throws -> StoredRow? {
        try run(statement, [PostgresData(string: key.typeName), PostgresData(string: key.identifier)])
            .first.map { try Self.readRow($0).get() }
    }

    func row(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow? {
        if let locked = lockedRows[key] { return locked?.isDeleted == false ? locked : nil }
        guard isLocking else { return try readRow(.liveRow, key) }
        let row = try rowOrTombstone(key, for: purpose)
        return row?.isDeleted == false ? row : nil
    }

    /// The rows `keys` names in one statement a type, when reads don't lock (in the writer's
    /// transaction each read locks its row: one at a time, as ``row(_:for:)``).
    func rows(_ keys: [ObjectKey], for purpose: RowPurpose) throws -> [StoredRow?] {
        guard !isLocking, keys.count > 1 else { return try keys.map { try row($0, for: purpose) } }
        var found: [ObjectKey: StoredRow] = [:]
        for (type, group) in Dictionary(grouping: keys.filter { lockedRows[$0] == nil }, by: \.typeName) {
            let identifiers = Array(Set(group.map(\.identifier)))
            for read in try readRows("""
                SELECT \(unescaped: Self.columns) FROM \(unescaped: objects)
                WHERE type = \(type) AND identifier = ANY(\(identifiers)) AND NOT is_deleted
                """) {
                let row = try read.get()
                found[row.key] = row
            }
        }
        return keys.map { key in
            if let locked = lockedRows[key] { return locked?.isDeleted == false ? locked : nil }
            return found[key]
        }
    }

    func rowOrTombstone(_ key: ObjectKey, for purpose: RowPurpose) throws -> StoredRow? {
        if let locked = lockedRows[key] { return locked }
        // In the writer's transaction, a row read to be written is locked until the commit, so
        // that a claim (which takes no schema lock) can't change it between the read and the write.
        let row = try readRow(isLocking ? .rowForUpdate : .row, key)
        if isLocking { lockedRows[key] = .some(row) }
        return row
    }

    /// The row `key` as this transaction locked or wrote it (`.some(nil)`: no row), or `nil`
    /// when it doesn't know.
    func lockedRow(_ key: ObjectKey) -> StoredRow?? {
        lockedRows[key]
    }

    /// Whether this access's reads of a row lock it: the writer, in a transaction, but a claim
    /// (whose rows are locked by its `SKIP LOCKED` read; the rows its objects reference are read
    /// without a lock, so that a claim never waits for a write).
    private var isLocking: Bool { writes && depth > 0 && !isClaiming }

    /// Records what the transaction wrote into the row `key` (`nil`: removed it), or, when
    /// `row` is not given, forgets every row read (a statement changed rows it can't tell).
    func wrote(_ key: ObjectKey? = nil, _ row: StoredRow?? = nil) {
        // Outside a transaction nothing holds the row: nothing to remember.
        guard depth > 0 else { return }
        guard let key else {
            lockedRows = [:]
            return
        }
        if var row = row ?? nil {
            row.provisional = nil
            row.sealedFor = nil
            lockedRows[key] = .some(row)
        } else if row != nil {
            lockedRows[key] = .some(nil)
        } else {
            lockedRows[key] = nil
        }
    }

    func rows(ofType type: String, for purpose: RowPurpose) throws -> [RowRead] {
        try readRows("""
            SELECT \(unescaped: Self.columns) FROM \(unescaped: objects) WHERE type = \(type) AND NOT is_deleted ORDER BY identifier
            """)
    }

    /// A page of 500 rows at a time, none held open across `body` (a connection runs one query
    /// at a time, and `body` reads the rows a row references on the same connection); the next
    /// page is asked for before `body` sees this one's rows, so the server reads it meanwhile.
    func forEachRow(ofType type: String, for purpose: RowPurpose, _ body: (RowRead) throws -> Void) throws {
        let limit = 500
        func page(after identifier: String) throws -> EventLoopFuture<[PostgresRow]> {
            try sendBufferedRows()
            return try execute(.page, [
                PostgresData(string: type), PostgresData(string: identifier), PostgresData(int64: Int64(limit))])
        }
        var next = try page(after: "")
        while true {
            let reads = try answer(after: next).map(Self.readRow)
            let isLast = reads.count < limit
            if !isLast, let last = reads.last { next = try page(after: last.key.identifier) }
            for read in reads { try body(read) }
            if isLast { return }
        }
    }

    func rows(ofType type: String, after identifier: String?, limit: Int, for purpose: RowPurpose) throws -> [RowRead] {
        try readRows(.page, [PostgresData(string: type), PostgresData(string: identifier ?? ""), PostgresData(int64: Int64(limit))])
    }

    func rows(ofType type: String, status: SyncStatus, for purpose: RowPurpose) throws -> [RowRead] {
        try readRows("""
            SELECT \(unescaped: Self.columns) FROM \(unescaped: objects)
            WHERE sync_status = \(Int64(status.rawValue)) AND type = \(type) AND NOT is_deleted
            ORDER BY modification_date, identifier
            """)
    }
}
