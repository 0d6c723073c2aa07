import Foundation

/// The versions of rows a garage handed out to the app: for each row it decoded, a hash of
/// the JSON it read and the row's revision then.
///
/// Why: a screen holds the objects it retrieved, and parking a parent re-parks the children
/// it holds. A child whose JSON is still what the garage handed out at revision `r` is not an
/// edit; if its row moved on since (a download, another process, another screen's edit), the
/// park leaves the row as it is rather than write last week's version over it
/// (``RevisionGuard/handedOutRevision``). A child whose JSON differs from every version handed
/// out is an edit, and is written.
///
/// The table is bounded (two generations of ``generationSize`` rows each): a version read long
/// ago, and forgotten since, is taken for an edit, as before this table existed. A decoder
/// collects its rows in a ``Batch`` and adds them when it ends, under one lock.
package final class HandedOutVersions: Sendable {
    /// Makes one, in its initial state.
    package init() {}

    /// How many rows one generation remembers before the older one is dropped.
    package static let generationSize = 65_536
    /// How many versions of one row are remembered (several screens may hold several).
    package static let versionsPerRow = 4

    private struct Versions {
        var hashes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var revisions: (Int64, Int64, Int64, Int64) = (0, 0, 0, 0)
        var next = 0

        func revision(of hash: UInt64) -> Int64? {
            if hashes.0 == hash { return revisions.0 }
            if hashes.1 == hash { return revisions.1 }
            if hashes.2 == hash { return revisions.2 }
            if hashes.3 == hash { return revisions.3 }
            return nil
        }

        mutating func record(_ hash: UInt64, _ revision: Int64) {
            switch hash {
            case hashes.0: revisions.0 = max(revisions.0, revision); return
            case hashes.1: revisions.1 = max(revisions.1, revision); return
            case hashes.2: revisions.2 = max(revisions.2, revision); return
            case hashes.3: revisions.3 = max(revisions.3, revision); return
            default: break
            }
            switch next {
            case 0: (hashes.0, revisions.0) = (hash, revision)
            case 1: (hashes.1, revisions.1) = (hash, revision)
            case 2: (hashes.2, revisions.2) = (hash, revision)
            default: (hashes.3, revisions.3) = (hash, revision)
            }
            next = (next + 1) % HandedOutVersions.versionsPerRow
        }
    }

    private struct Table {
        var current: [UInt64: Versions] = [:]
        var older: [UInt64: Versions] = [:]
    }

    private let table = Protected(Table())

    /// The rows one decoder handed out, added to the table when it ends.
    package struct Batch {
        fileprivate var entries: [(key: UInt64, data: UInt64, revision: Int64)] = []

        /// Notes that the row `key`, whose JSON hashes to `dataHash`, was read at `revision`
        /// (a committed one: a row of unsaved changes has a provisional revision, below 1, and
        /// its caller doesn't note it).
        package mutating func record(_ key: ObjectKey, dataHash: UInt64, revision: Int64) {
            entries.append((HandedOutVersions.hash(key), dataHash, revision))
        }

        package var isEmpty: Bool { entries.isEmpty }
    }

    /// Adds the rows of `batch`.
    package func add(_ batch: Batch) {
        guard !batch.entries.isEmpty else { return }
        table.write { table in
            for entry in batch.entries {
                if table.current[entry.key] == nil, table.current.count >= Self.generationSize {
                    table.older = table.current
                    table.current = [:]
                }
                var versions = table.current[entry.key] ?? table.older[entry.key] ?? Versions()
                versions.record(entry.data, entry.revision)
                table.current[entry.key] = versions
            }
        }
    }

    /// The revisions at which the rows `rows` (a park's children, by key and the hash of their
    /// JSON) were handed out with that very JSON, by index in `rows`; one lock for all.
    package func revisions(of rows: [(key: ObjectKey, dataHash: UInt64)]) -> [Int: Int64] {
        guard !rows.isEmpty else { return [:] }
        let keys = rows.map { Self.hash($0.key) }
        return table.read { table in
            guard !table.current.isEmpty || !table.older.isEmpty else { return [:] }
            var found: [Int: Int64] = [:]
            for (index, row) in rows.enumerated() {
                let revision = table.current[keys[index]]?.revision(of: row.dataHash)
                    ?? table.older[keys[index]]?.revision(of: row.dataHash)
                if let revision { found[index] = revision }
            }
            return found
        }
    }

    /// A hash of a row's JSON: 64 bits, eight bytes at a time (a table of versions, not a
    /// defence against collisions chosen by an attacker: a collision makes a park keep a child
    /// as stored, never write one). Never 0, which means "no hash".
    package static func hash(_ text: String) -> UInt64 {
        var text = text
        return text.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// ``hash(_:)-(String)`` of bytes.
    package static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var offset = 0
        let count = bytes.count
        while offset + 8 <= count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            state = (state ^ word) &* 0xFF51_AFD7_ED55_8CCD
            state ^= state >> 32
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        state = (state ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        state ^= state >> 29
        return state == 0 ? 1 : state
    }

    /// The hash of a row's key (the type name's and the identifier's, the first turned so that
    /// swapping the two texts changes it).
    package static func hash(_ key: ObjectKey) -> UInt64 {
        let type = hash(key.typeName)
        return ((type << 23) | (type >> 41)) ^ hash(key.identifier)
    }
}
