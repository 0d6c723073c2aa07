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
///
/// Each generation is one flat array of slots (open addressing, linear probing, at most half
/// full, grown as it fills), a slot per version of a row: its key's hash, its JSON's hash, its
/// revision, 24 bytes. Retrieves note every row they decode here, at random places of the table: a small
/// table, read and written in place, costs them fewer cache misses and no hashing beyond the
/// two hashes they compute anyway.
package final class HandedOutVersions: Sendable {
    /// Makes one, in its initial state.
    package init() {}

    /// How many versions one generation remembers before the older one is dropped.
    package static let generationSize = 65_536
    /// How many versions of one row are remembered (several screens may hold several).
    package static let versionsPerRow = 4

    /// A version of a row: `key` 0 marks an empty slot (``hash(_:)-(ObjectKey)`` is never 0).
    private struct Slot {
        var key: UInt64 = 0
        var data: UInt64 = 0
        var revision: Int64 = 0
    }

    /// One generation: ``HandedOutVersions/generationSize`` versions at most, in at least twice
    /// as many slots (a power of two): 1,024 at first, doubled as it fills, so that a garage that
    /// hands out a few objects keeps a small table.
    private struct Generation {
        static let smallest = 1_024
        var slots: [Slot] = []
        var count = 0

        /// The revision at which the row `key` was handed out with the JSON `data`.
        func revision(key: UInt64, data: UInt64) -> Int64? {
            guard count > 0 else { return nil }
            return slots.withUnsafeBufferPointer { slots in
                let mask = slots.count - 1
                var index = Int(truncatingIfNeeded: key) & mask
                while slots[index].key != 0 {
                    if slots[index].key == key, slots[index].data == data { return slots[index].revision }
                    index = (index + 1) & mask
                }
                return nil
            }
        }

        /// Notes the version; `false` when it is a new one and the generation is full.
        mutating func record(key: UInt64, data: UInt64, revision: Int64) -> Bool {
            if slots.isEmpty { slots = Array(repeating: Slot(), count: Self.smallest) }
            let recorded = slots.withUnsafeMutableBufferPointer { slots -> Bool in
                let mask = slots.count - 1
                var index = Int(truncatingIfNeeded: key) & mask
                var versions = 0
                var oldest: Int?
                while slots[index].key != 0 {
                    if slots[index].key == key {
                        if slots[index].data == data {
                            slots[index].revision = max(slots[index].revision, revision)
                            return true
                        }
                        versions += 1
                        if oldest.map({ slots[index].revision < slots[$0].revision }) ?? true { oldest = index }
                    }
                    index = (index + 1) & mask
                }
                // A row's fifth version takes the place of its oldest (the lowest revision).
                guard versions >= HandedOutVersions.versionsPerRow, let oldest else { return false }
                slots[oldest] = Slot(key: key, data: data, revision: revision)
                return true
            }
            if recorded { return true }
            guard count < HandedOutVersions.generationSize else { return false }
            if (count + 1) * 2 > slots.count { grow() }
            insert(Slot(key: key, data: data, revision: revision))
            count += 1
            return true
        }

        /// Puts `slot` in the first empty slot of its probe sequence.
        private mutating func insert(_ slot: Slot) {
            slots.withUnsafeMutableBufferPointer { slots in
                let mask = slots.count - 1
                var index = Int(truncatingIfNeeded: slot.key) & mask
                while slots[index].key != 0 { index = (index + 1) & mask }
                slots[index] = slot
            }
        }

        /// Twice the slots, the versions placed again.
        private mutating func grow() {
            let old = slots
            slots = Array(repeating: Slot(), count: old.count * 2)
            for slot in old where slot.key != 0 { insert(slot) }
        }
    }

    private struct Table {
        var current = Generation()
        var older = Generation()
    }

    private let table = Protected(Table())

    /// The rows one decoder handed out, added to the table when it ends.
    package struct Batch {
        fileprivate var entries: [(key: UInt64, data: UInt64, revision: Int64)] = []

        /// An empty batch.
        package init() {}

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
            for entry in batch.entries
            where !table.current.record(key: entry.key, data: entry.data, revision: entry.revision) {
                // The current generation is full: it becomes the older one, and a new one starts.
                swap(&table.older, &table.current)
                table.current = Generation()
                _ = table.current.record(key: entry.key, data: entry.data, revision: entry.revision)
            }
        }
    }

    /// The revisions at which the rows `rows` (a park's children, by key and the hash of their
    /// JSON) were handed out with that very JSON, by index in `rows`; one lock for all.
    package func revisions(of rows: [(key: ObjectKey, dataHash: UInt64)]) -> [Int: Int64] {
        guard !rows.isEmpty else { return [:] }
        let keys = rows.map { Self.hash($0.key) }
        return table.read { table in
            guard table.current.count > 0 || table.older.count > 0 else { return [:] }
            var found: [Int: Int64] = [:]
            for (index, row) in rows.enumerated() {
                let revision = table.current.revision(key: keys[index], data: row.dataHash)
                    ?? table.older.revision(key: keys[index], data: row.dataHash)
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
    /// swapping the two texts changes it). Never 0, which marks an empty slot.
    package static func hash(_ key: ObjectKey) -> UInt64 {
        let type = hash(key.typeName)
        let combined = ((type << 23) | (type >> 41)) ^ hash(key.identifier)
        return combined == 0 ? 1 : combined
    }
}
