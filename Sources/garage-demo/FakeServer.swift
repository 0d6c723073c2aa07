import GarageLite

/// An in-memory web service for notes: each note with the revision of its last change, and a
/// change feed (what changed, and what was deleted, since a cursor).
actor FakeServer: NotesServer {
    /// A note, or the deletion of one (`note` is nil), and the revision that made it so.
    private var entries: [String: (note: Note?, revision: Int)] = [:]
    /// The revision of the last change; the cursor of the change feed.
    private var revision = 0
    /// While false, every call throws `Unreachable`.
    private var isReachable = true

    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "the server did not answer" }
    }

    func setReachable(_ reachable: Bool) { isReachable = reachable }

    func upload(_ notes: [Note], deleting identifiers: [String]) throws -> [String: any Error] {
        guard isReachable else { throw Unreachable() }
        var rejected: [String: any Error] = [:]
        for var note in notes {
            // An edit based on an older revision than the server's would overwrite a change
            // the device has not seen: rejected. (A note deleted here is re-created.)
            if let current = entries[note.id], let currentNote = current.note, current.revision != note.serverRevision {
                rejected[note.id] = NoteConflict(current: currentNote)
                continue
            }
            revision += 1
            note.serverRevision = revision
            note.syncStatus = .undetermined   // the server doesn't keep the devices' statuses
            entries[note.id] = (note, revision)
        }
        for id in identifiers where entries[id]?.note != nil {
            revision += 1
            entries[id] = (nil, revision)
        }
        return rejected
    }

    func changes(since cursor: Int) throws -> (notes: [Note], deleted: [String], cursor: Int) {
        guard isReachable else { throw Unreachable() }
        let changed = entries.values.filter { $0.revision > cursor }.sorted { $0.revision < $1.revision }
        let deleted = entries.filter { $0.value.revision > cursor && $0.value.note == nil }.map(\.key).sorted()
        return (changed.compactMap(\.note), deleted, revision)
    }

    /// The notes the server holds, by identifier.
    func notes() -> [String: Note] {
        entries.compactMapValues(\.note)
    }
}
