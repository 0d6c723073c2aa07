import Foundation
import GarageLite

/// The next pages of downloads in progress, read while the device receives and applies the
/// one it was just sent: a device that has more to download asks next for the page after the
/// cursor it was given, and finds it read.
///
/// A page is only handed to a request of the same type, access (user and scopes) and cursor,
/// once, and is dropped after ``lifetime`` unasked. At most ``capacity`` pages are held or
/// being read: beyond, a download reads no page ahead. The download that takes a page hands it
/// out only if no commit moved its scopes' counters since it was read (``Page/counters``):
/// then it is the page a read at that moment would give. Otherwise it reads the page again: a
/// page read before the device's own upload (the download stopped, the next sync uploaded
/// first) would send back an older version of what it uploaded, as news.
final class ReadAhead: Sendable {
    /// What a page read ahead answers: a download of this type, by this access, after this cursor.
    struct Key: Hashable, Sendable {
        var typeName: String
        var access: SyncAccess
        var cursor: String?
    }

    /// A page's answer: its JSON, and what the metrics count when it is sent.
    struct Page: Sendable {
        var json: Data
        var changes: Int
        var rebase: Bool
        /// The cursor after it, when it has more: the next page's.
        var next: String?
        /// The positions of the access's scopes' counters (in the order of the sorted scopes)
        /// read before the page, when it was read ahead.
        var counters: [Int64]? = nil
    }

    private struct Entry {
        var task: Task<Page, any Error>
        var started: ContinuousClock.Instant
    }

    /// How many pages are held or being read at most.
    let capacity: Int
    /// How long a page read ahead waits for its request.
    let lifetime: Duration
    private let entries = Protected<[Key: Entry]>([:])

    init(capacity: Int = 64, lifetime: Duration = .seconds(30)) {
        self.capacity = capacity
        self.lifetime = lifetime
    }

    /// The page read ahead for `key`, taken (no other request gets it); `nil` when none was,
    /// or its read failed (the caller reads it then, and meets the error itself if it lasts).
    func take(_ key: Key) async -> Page? {
        guard let entry = entries.write({ $0.removeValue(forKey: key) }) else { return nil }
        return try? await entry.task.value
    }

    /// Starts reading the page `key` names with `read`, unless one is held or being read for
    /// it already, or ``capacity`` pages are. Pages older than ``lifetime`` are dropped first.
    func start(_ key: Key, _ read: @escaping @Sendable () async throws -> Page) {
        let now = ContinuousClock.now
        let dropped: [Entry] = entries.write { entries in
            let old = entries.filter { now - $0.value.started >= lifetime }
            for key in old.keys { entries.removeValue(forKey: key) }
            guard entries[key] == nil, entries.count < capacity else { return Array(old.values) }
            entries[key] = Entry(task: Task { try await read() }, started: now)
            return Array(old.values)
        }
        for entry in dropped { entry.task.cancel() }
    }

    /// How many pages are held or being read.
    var count: Int { entries.read { $0.count } }

    /// Returns once every page being read is read (or failed): for tests.
    func settled() async {
        for task in entries.read({ $0.values.map(\.task) }) { _ = try? await task.value }
    }
}
