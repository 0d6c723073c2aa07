import Foundation

// The query workloads: a store of N notes, one notebook in N / 300 (so that a notebook holds
// about 300 notes at every N), indexed on the notebook and the title; then a filter by
// notebook, the same filter through retrieveAll and Swift (GarageLite only), its count, the
// first page of 20 notes by title, and the first page of a notebook by title. Each store is
// built once per implementation (untimed), and every query row of that size reads it.
//
// The text rows (named "query: text: …", also selected by --filter text) have stores of their
// own: N notes with a text index on the title and body, then every note holding one rare word,
// the most relevant notes for two words, and single parks with the text index and without it.

/// What a query row does.
enum QueryKind: String, CaseIterable {
    /// Creating the notebook and title indexes on the built store (one timed run).
    case createIndexes = "create indexes"
    /// The notes of one notebook, by identifier, through the index.
    case filter = "notebook =="
    /// The same notes, from every note retrieved and filtered in Swift.
    case filterInMemory = "notebook == in memory"
    /// How many notes the notebook holds.
    case count = "count notebook =="
    /// The first notes by title.
    case page = "first page by title"
    /// The first notes of the notebook by title.
    case filteredPage = "notebook's first page by title"
    /// Creating the text index of the title and body on the built store (one timed run).
    case createTextIndex = "create text index"
    /// Every note holding one rare word, by identifier, through the text index.
    case textMatches = "text matches"
    /// The most relevant notes for two words (BM25), ties by identifier.
    case textSearch = "text search"
    /// Single parks of new notes (a commit each) into the store with its text index.
    case parksWithTextIndex = "single parks with the text index"
    /// The same after the text index (and what keeps it) is dropped.
    case parksWithoutTextIndex = "single parks without a text index"
}

/// The store a query row reads: notes indexed on the notebook and the title, or on their text.
enum QueryStore {
    case notebooks, text
}

struct QueryRow {
    var kind: QueryKind
    var storeSize: Int
    var name: String
    var unit: String
    /// The implementations that run it (`nil`: every one).
    var implementations: [Implementation]?
    var store: QueryStore = .notebooks

    /// The groups `--filter` selects it by: "query", and "text" for the text rows.
    var groups: [String] {
        store == .text ? ["query", "text"] : ["query"]
    }
}

/// A query's answer, checked against ``QueryExpectations``.
enum QueryAnswer {
    case notes([BenchNote])
    case count(Int)
}

/// What each query must answer in a store of `storeSize` notes, from the generator (not from
/// any implementation): the results agree with it, so they agree with each other.
struct QueryExpectations {
    var storeSize: Int
    var notebook: String
    /// The notebook's notes, in identifier order.
    var inNotebook: [BenchNote]
    /// The first notes of the store by title (titles are unique: no ties).
    var firstByTitle: [BenchNote]
    /// The first notes of the notebook by title.
    var notebookFirstByTitle: [BenchNote]
    /// The text rows' answers, in a text store.
    var text: TextExpectations?

    /// A text store's expectations (it has no notebook rows).
    init(text: TextExpectations) {
        storeSize = text.storeSize
        notebook = ""
        inNotebook = []
        firstByTitle = []
        notebookFirstByTitle = []
        self.text = text
    }

    /// How many notebooks a store of `n` notes has, and the number of the one queried.
    static func notebooks(storeSize n: Int, perNotebook: Int) -> (count: Int, queried: Int) {
        let count = max(1, n / perNotebook)
        return (count, count / 2)
    }

    /// How many notes the queried notebook holds.
    static func matches(storeSize n: Int, perNotebook: Int) -> Int {
        let (count, queried) = notebooks(storeSize: n, perNotebook: perNotebook)
        return (n - queried + count - 1) / count
    }

    init(storeSize n: Int, perNotebook: Int, pageSize: Int) {
        let (notebooks, queried) = Self.notebooks(storeSize: n, perNotebook: perNotebook)
        storeSize = n
        notebook = BenchData.notebook(queried)
        inNotebook = stride(from: queried, to: n, by: notebooks).map { BenchData.note($0, notebooks: notebooks) }
        // The `pageSize` smallest titles (as SQLite orders text: by their UTF-8 bytes).
        func precedes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
        var smallest: [(title: String, index: Int)] = []
        for index in 0..<n {
            let title = BenchData.noteTitle(index)
            guard smallest.count < pageSize || precedes(title, smallest[smallest.count - 1].title) else { continue }
            let position = smallest.firstIndex { precedes(title, $0.title) } ?? smallest.count
            smallest.insert((title, index), at: position)
            if smallest.count > pageSize { smallest.removeLast() }
        }
        firstByTitle = smallest.map { BenchData.note($0.index, notebooks: notebooks) }
        notebookFirstByTitle = Array(inNotebook.sorted { precedes($0.title, $1.title) }.prefix(pageSize))
    }

    private func expected(_ kind: QueryKind) -> QueryAnswer {
        switch kind {
        case .filter, .filterInMemory: .notes(inNotebook)
        case .count: .count(inNotebook.count)
        case .page: .notes(firstByTitle)
        case .filteredPage: .notes(notebookFirstByTitle)
        case .textMatches: .notes(text?.withRareWord ?? [])
        case .textSearch: .notes(text?.mostRelevant ?? [])
        case .createIndexes, .createTextIndex, .parksWithTextIndex, .parksWithoutTextIndex: .count(0)
        }
    }

    /// Checks the count and the first and last identifiers (in the timed loop).
    func quickCheck(_ answer: QueryAnswer, _ kind: QueryKind) throws {
        switch (answer, expected(kind)) {
        case (.notes(let notes), .notes(let expected)):
            try expect(notes.count == expected.count && notes.first?.id == expected.first?.id
                           && notes.last?.id == expected.last?.id,
                       "\(kind.rawValue): \(notes.count) notes \(notes.first?.id ?? "")…\(notes.last?.id ?? ""), "
                           + "expected \(expected.count) \(expected.first?.id ?? "")…\(expected.last?.id ?? "")")
        case (.count(let count), .count(let expected)):
            try expect(count == expected, "\(kind.rawValue): counted \(count), expected \(expected)")
        default:
            throw BenchFailure("\(kind.rawValue): answer of the wrong kind")
        }
    }

    /// Checks every note, whole (its identifier, its order, every property), or the count.
    func fullCheck(_ answer: QueryAnswer, _ kind: QueryKind) throws {
        try quickCheck(answer, kind)
        if case .notes(let notes) = answer, case .notes(let expected) = expected(kind), notes != expected {
            let first = notes.indices.first { notes[$0] != expected[$0] } ?? 0
            throw BenchFailure("\(kind.rawValue): note \(first) is \(notes[first]), expected \(expected[first])")
        }
    }
}

struct QueryWorkloads {
    var sizes: Sizes
    /// The text stores' expectations, computed once (the rows' names hold their counts).
    private let textCache = TextExpectations.Cache()

    /// Every query row: for each store size, the indexes' creation, then the queries; then the
    /// text rows of each text store size.
    var all: [QueryRow] {
        sizes.queryStoreSizes.flatMap(rows) + sizes.textStoreSizes.flatMap(textRows)
    }

    /// The text store of `n` notes' expectations.
    func textExpectations(_ n: Int) -> TextExpectations {
        textCache.get(storeSize: n, notebooks: QueryExpectations.notebooks(storeSize: n, perNotebook: sizes.queryPerNotebook).count,
                      pageSize: sizes.queryPageSize)
    }

    func textRows(storeSize n: Int) -> [QueryRow] {
        let text = textExpectations(n)
        let notes = "\(short(n)) notes"
        let parks = "\(short(sizes.textParks)) single parks (a commit each) into \(notes)"
        return [
            QueryRow(kind: .createTextIndex, storeSize: n,
                     name: "query: text: create the text index on the title and body of \(notes)", unit: "notes/s", store: .text),
            QueryRow(kind: .textMatches, storeSize: n,
                     name: "query: text: every note with \"\(TextExpectations.rareWord)\" (\(text.withRareWord.count) of \(notes))",
                     unit: "queries/s", store: .text),
            QueryRow(kind: .textSearch, storeSize: n,
                     name: "query: text: the \(sizes.queryPageSize) most relevant for \"\(TextExpectations.twoWords)\" "
                         + "(\(formattedCount(text.twoWordMatches)) of \(notes))",
                     unit: "searches/s", store: .text),
            QueryRow(kind: .parksWithTextIndex, storeSize: n, name: "query: text: \(parks) with the text index",
                     unit: "notes/s", store: .text),
            QueryRow(kind: .parksWithoutTextIndex, storeSize: n, name: "query: text: \(parks) without a text index",
                     unit: "notes/s", store: .text),
        ]
    }

    func rows(storeSize n: Int) -> [QueryRow] {
        let m = QueryExpectations.matches(storeSize: n, perNotebook: sizes.queryPerNotebook)
        let notebook = "notebook == X (\(m) of \(short(n)) notes)"
        let page = sizes.queryPageSize
        return [
            QueryRow(kind: .createIndexes, storeSize: n,
                     name: "query: create the notebook and title indexes on \(short(n)) notes", unit: "notes/s"),
            QueryRow(kind: .filter, storeSize: n, name: "query: \(notebook), indexed", unit: "queries/s"),
            QueryRow(kind: .filterInMemory, storeSize: n, name: "query: \(notebook), retrieveAll + filter in memory",
                     unit: "queries/s", implementations: [.garageLite]),
            QueryRow(kind: .count, storeSize: n, name: "query: count \(notebook), indexed", unit: "counts/s"),
            QueryRow(kind: .page, storeSize: n, name: "query: page of the first \(page) of \(short(n)) notes by title, indexed",
                     unit: "pages/s"),
            QueryRow(kind: .filteredPage, storeSize: n, name: "query: page of the first \(page) of \(notebook) by title",
                     unit: "pages/s"),
        ]
    }

    /// Runs `selected` (rows of ``all``) through `implementations`: for each store (kind and
    /// size) and each implementation, builds the store and its indexes once, then times each
    /// row on it. `keepStores`: the directory the stores are built in and left in (otherwise a
    /// temporary one, deleted); `report` is called with each row when it is done.
    func run(_ selected: [QueryRow], _ implementations: [Implementation], keepStores: URL?,
             report: (Row) -> Void) {
        let stores = sizes.queryStoreSizes.map { (QueryStore.notebooks, $0) } + sizes.textStoreSizes.map { (QueryStore.text, $0) }
        for (store, n) in stores {
            let rows = selected.filter { $0.store == store && $0.storeSize == n }
            guard !rows.isEmpty else { continue }
            let expected: QueryExpectations
            if store == .text {
                let text = textExpectations(n)
                progress("[query] text, \(short(n)) notes: \(text.withRareWord.count) hold \"\(TextExpectations.rareWord)\", "
                         + "\(text.twoWordMatches) hold \"\(TextExpectations.twoWords)\"; "
                         + "the \(text.mostRelevant.count) most relevant: " + text.relevanceSummary)
                expected = QueryExpectations(text: text)
            } else {
                progress("[query] \(short(n)) notes: computing the expected answers")
                expected = QueryExpectations(storeSize: n, perNotebook: sizes.queryPerNotebook, pageSize: sizes.queryPageSize)
            }
            var results = rows.map { Row(name: $0.name, unit: $0.unit, query: ($0.kind, n)) }
            for implementation in implementations {
                let indices = rows.indices.filter { rows[$0].implementations?.contains(implementation) ?? true }
                guard !indices.isEmpty else { continue }
                let label = implementation.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                do {
                    try withStore(store, n, implementation, keepStores) { contender in
                        let created = try build(contender, store, n, label: label)
                        for index in indices {
                            let row = rows[index]
                            let cell: Result<Cell, any Error>
                            switch row.kind {
                            case .createIndexes, .createTextIndex:
                                cell = .success(created)
                            case .parksWithTextIndex, .parksWithoutTextIndex:
                                cell = Result { try measureParks(row.kind, contender, expected) }
                            default:
                                cell = Result { try measure(row.kind, contender, expected) }
                            }
                            results[index].cells[implementation] = cell
                            switch cell {
                            case .success(let cell):
                                progress(String(format: cell.opsPerSecond < 10 ? "    %@ %10.2f %@ (%.2f s), peak RSS %.0f MB — %@"
                                                    : "    %@ %10.0f %@ (%.2f s), peak RSS %.0f MB — %@",
                                                label, cell.opsPerSecond, row.unit, cell.seconds, cell.peakMB, row.name))
                            case .failure(let error):
                                progress("    \(implementation.rawValue) FAILED: \(error) — \(row.name)")
                            }
                        }
                    }
                } catch {
                    progress("    \(implementation.rawValue) FAILED to build the store of \(short(n)) notes\(store == .text ? " (text)" : ""): \(error)")
                    for index in indices where results[index].cells[implementation] == nil {
                        results[index].cells[implementation] = .failure(error)
                    }
                }
            }
            results.forEach(report)
        }
    }

    /// Opens a fresh store of `implementation` for `n` notes, in `keepStores` or a temporary directory.
    private func withStore(_ store: QueryStore, _ n: Int, _ implementation: Implementation, _ keepStores: URL?,
                           _ body: (any QueryContender) throws -> Void) throws {
        func run(_ path: String) throws {
            let contender = try implementation.openForQueries(path: path)
            defer { try? contender.close() }
            try body(contender)
        }
        guard let keepStores else {
            return try withTemporaryDirectory { try run($0.appendingPathComponent("store.sqlite").path) }
        }
        try FileManager.default.createDirectory(at: keepStores, withIntermediateDirectories: true)
        let kind = store == .text ? "text" : "query"
        let path = keepStores.appendingPathComponent("\(kind)-\(short(n))-\(implementation.rawValue).sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try run(path)
    }

    /// Parks `n` notes in batches (untimed), then creates the indexes (the notebook and title
    /// indexes, or the text index): that creation's cell.
    private func build(_ contender: any QueryContender, _ store: QueryStore, _ n: Int, label: String) throws -> Cell {
        let notebooks = QueryExpectations.notebooks(storeSize: n, perNotebook: sizes.queryPerNotebook).count
        let started = ContinuousClock.now
        var start = 0
        while start < n {
            let end = min(start + sizes.buildBatch, n)
            try contender.parkAll(notes: BenchData.notes(start..<end, notebooks: notebooks))
            start = end
        }
        let built = (ContinuousClock.now - started).seconds
        Memory.resetPeak()
        let indexing = ContinuousClock.now
        switch store {
        case .notebooks: try contender.createNoteIndexes()
        case .text: try contender.createTextIndex()
        }
        let seconds = (ContinuousClock.now - indexing).seconds
        progress(String(format: "    %@ built %@ notes in %.1f s (generated and parked, untimed)", label, short(n), built))
        return Cell(opsPerSecond: Double(n) / seconds, seconds: seconds, peakMB: Memory.peakMB())
    }

    /// One query of `kind`.
    private func query(_ kind: QueryKind, _ contender: any QueryContender, _ expected: QueryExpectations) throws -> QueryAnswer {
        switch kind {
        case .filter: .notes(try contender.notes(inNotebook: expected.notebook))
        case .filterInMemory: .notes(try contender.allNotesFiltered(notebook: expected.notebook))
        case .count: .count(try contender.countNotes(inNotebook: expected.notebook))
        case .page: .notes(try contender.notesByTitle(inNotebook: nil, limit: sizes.queryPageSize))
        case .filteredPage: .notes(try contender.notesByTitle(inNotebook: expected.notebook, limit: sizes.queryPageSize))
        case .textMatches: .notes(try contender.notes(matchingText: TextExpectations.rareWord))
        case .textSearch: .notes(try contender.mostRelevantNotes(TextExpectations.twoWords, limit: sizes.queryPageSize))
        case .createIndexes, .createTextIndex: throw BenchFailure("the indexes are created with the store")
        case .parksWithTextIndex, .parksWithoutTextIndex: throw BenchFailure("\(kind.rawValue) is no query")
        }
    }

    /// Times `kind`'s query on `contender`: a warm-up (untimed, its answer checked whole), then
    /// `readRuns` timed runs, each repeating the query up to `queryRepetitions` times or until
    /// `queryBudget` seconds have passed, at least once; each answer checked by count and
    /// first and last identifiers, the last one whole after the clock stops. Keeps the best run.
    /// The in-memory filter has no warm-up (one such query is a run).
    private func measure(_ kind: QueryKind, _ contender: any QueryContender, _ expected: QueryExpectations) throws -> Cell {
        Memory.resetPeak()
        if kind != .filterInMemory {
            try expected.fullCheck(query(kind, contender, expected), kind)
        }
        var best: Cell?
        var last: QueryAnswer?
        for _ in 0..<sizes.readRuns {
            var done = 0
            let start = ContinuousClock.now
            var seconds = 0.0
            repeat {
                let answer = try query(kind, contender, expected)
                try expected.quickCheck(answer, kind)
                last = answer
                done += 1
                seconds = (ContinuousClock.now - start).seconds
            } while done < sizes.queryRepetitions && seconds < sizes.queryBudget
            let opsPerSecond = Double(done) / seconds
            if best == nil || opsPerSecond > best!.opsPerSecond {
                best = Cell(opsPerSecond: opsPerSecond, seconds: seconds, peakMB: 0)
            }
        }
        best!.peakMB = Memory.peakMB()
        if let last { try expected.fullCheck(last, kind) }
        return best!
    }

    /// Times `textParks` single parks of new notes (a commit each, one timed run): with the
    /// text index, notes N..<N+k, then checks that the index finds those of them that hold the
    /// rare word; without, the index dropped first (untimed), notes N+k..<N+2k.
    private func measureParks(_ kind: QueryKind, _ contender: any QueryContender, _ expected: QueryExpectations) throws -> Cell {
        guard let text = expected.text else { throw BenchFailure("\(kind.rawValue): not a text store") }
        let n = expected.storeSize, k = sizes.textParks
        let first = n + (kind == .parksWithTextIndex ? 0 : k)
        let notes = BenchData.notes(first..<first + k, notebooks: text.notebooks)
        if kind == .parksWithoutTextIndex { try contender.dropTextIndex() }
        Memory.resetPeak()
        let start = ContinuousClock.now
        for note in notes { try contender.park(note: note) }
        let seconds = (ContinuousClock.now - start).seconds
        let cell = Cell(opsPerSecond: Double(k) / seconds, seconds: seconds, peakMB: Memory.peakMB())
        if kind == .parksWithTextIndex {
            let found = try contender.notes(matchingText: TextExpectations.rareWord)
            let wanted = text.withRareWord + notes.filter(TextExpectations.holdsRareWord)
            try expect(found == wanted, "\(kind.rawValue): after the parks, \(found.count) notes hold \"\(TextExpectations.rareWord)\", "
                           + "expected \(wanted.count) (\(wanted.count - text.withRareWord.count) of the parked)")
        }
        return cell
    }
}

/// 12345 → "12,345".
func formattedCount(_ n: Int) -> String {
    var out = ""
    for (index, character) in String(n).reversed().enumerated() {
        if index > 0, index % 3 == 0 { out.append(",") }
        out.append(character)
    }
    return String(out.reversed())
}
