import Foundation
import GRDB
import PropertyBased
import Testing
@testable import GarageLite

/// Random and mutated input for the JSON reader, the reference-aware decoder and the row
/// reader: each must give a value or a clear error, never crash, hang or damage other rows.
///
/// Every case draws from a seed fixed by the test, the case number and `GARAGE_FUZZ_SEED`,
/// so a failure comes back on the next run; its message says how to run that case alone.
/// `GARAGE_FUZZ_CASES` sets the number of cases of each fuzz test (see ``Fuzzing``).
@Suite("Fuzzing", .firstPassOnly)
struct FuzzTests {
    // MARK: - The JSON reader

    /// Parses `bytes`: a value must write back to JSON that reads as the same value; anything
    /// else must throw `JSONReader.Failure`. Returns whether the bytes were accepted.
    @discardableResult
    static func checkReader(_ bytes: [UInt8], _ comment: @autoclosure () -> Comment,
                            sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let value: JSONValue
        do {
            value = try JSONReader.parse(bytes)
        } catch is JSONReader.Failure {
            return false
        } catch {
            Issue.record(comment().with("\(type(of: error)) is not a JSONReader.Failure: \(error)"), sourceLocation: sourceLocation)
            return false
        }
        let rewritten = JSONWriter.bytes(from: value)
        #expect((try? JSONReader.parse(rewritten)) == value,
                comment().with("the value read does not survive writing: \(FuzzModels.show(rewritten))"),
                sourceLocation: sourceLocation)
        return true
    }

    @Test func readerSurvivesRandomBytes() {
        let test = "readerSurvivesRandomBytes"
        var accepted = 0
        let cases = Fuzzing.cases(default: 5_000)
        for index in cases {
            Fuzzing.willRun(test, case: index)
            var random = Fuzzing.random(test, case: index)
            let bytes = FuzzGen.randomBytes.draw(&random)
            if Self.checkReader(bytes, Fuzzing.reproduction(test, case: index, FuzzModels.show(bytes))) {
                accepted += 1
            }
        }
        // Random bytes are rarely JSON, but short ones sometimes are ("1", "[]", "\"\"").
        #expect(cases.count < 1_000 || accepted > 0, "no random input was JSON: the generator is broken")
    }

    @Test func readerSurvivesMutatedParkedJSON() throws {
        let store = try FuzzedStore()
        let documents = try store.originals.map { Array(try $0.decode(String.self, forColumn: "data").utf8) }
        let test = "readerSurvivesMutatedParkedJSON"
        var accepted = 0, refused = 0
        let cases = Fuzzing.cases(default: 5_000)
        for index in cases {
            Fuzzing.willRun(test, case: index)
            var random = Fuzzing.random(test, case: index)
            let document = Gen.int(in: 0..<documents.count).draw(&random)
            let mutations = FuzzGen.mutations.draw(&random)
            var bytes = documents[document]
            for mutation in mutations { mutation.apply(to: &bytes, donors: documents) }
            let comment = Fuzzing.reproduction(test, case: index, "\(store.keys[document]) after \(mutations)")
            if Self.checkReader(bytes, comment) { accepted += 1 } else { refused += 1 }
        }
        #expect(cases.count < 1_000 || (accepted > 0 && refused > 0),
                "\(accepted) mutants accepted, \(refused) refused: the mutations reach one outcome only")
    }

    @Test func readerRefusesEveryTruncationOfParkedJSON() throws {
        let store = try FuzzedStore()
        for (key, row) in zip(store.keys, store.originals) {
            let bytes = Array(try row.decode(String.self, forColumn: "data").utf8)
            #expect(Self.checkReader(bytes, "\(key) as parked"))
            for end in 0..<bytes.count {
                // A prefix of an object or array is never a whole document.
                #expect(!Self.checkReader(Array(bytes[..<end]), "\(key) cut at \(end)"))
            }
        }
    }

    @Test func readerLimitsNesting() throws {
        for opening in ["[", "{\"a\":"] {
            let deep = String(repeating: opening, count: 100_000)
            #expect(throws: JSONReader.Failure.self) { try JSONReader.parse(deep) }
            let balanced = deep + "1" + String(repeating: opening == "[" ? "]" : "}", count: 100_000)
            let failure = try #require(throws: JSONReader.Failure.self) { try JSONReader.parse(balanced) }
            #expect(failure.reason.contains("nesting deeper than \(JSONReader.maximumDepth)"))
        }
        let deepest = String(repeating: "[", count: JSONReader.maximumDepth) + String(repeating: "]", count: JSONReader.maximumDepth)
        #expect(throws: Never.self) { try JSONReader.parse(deepest) }
        #expect(throws: JSONReader.Failure.self) { try JSONReader.parse("[" + deepest + "]") }
    }

    @Test func readerKeepsHugeNumbersAsText() throws {
        let digits = "1" + String(repeating: "0", count: 100_000)
        #expect(try JSONReader.parse(digits) == .number(digits))
        #expect(try JSONReader.parse("-1e999999999") == .number("-1e999999999"))
        #expect(try JSONReader.parse("[1E-999999999]") == .array([.number("1E-999999999")]))
        for invalid in ["01", "1.", "-", "1e", "1e+", ".5", "+1", "0x10", "1_000", "Infinity", "NaN", "--1"] {
            #expect(throws: JSONReader.Failure.self, "\(invalid)") { try JSONReader.parse(invalid) }
        }
    }

    @Test func readerRefusesInvalidUTF8() throws {
        let invalid: [[UInt8]] = [
            [0xFF], [0xC0, 0x80], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xF0, 0x9F, 0x98],
        ]
        for sequence in invalid {
            let inString: [UInt8] = [0x22, 0x61] + sequence + [0x22]
            #expect(throws: JSONReader.Failure.self, "\(sequence) in a string") { try JSONReader.parse(inString) }
            let escaped: [UInt8] = [0x22, 0x5C, 0x6E] + sequence + [0x22]
            #expect(throws: JSONReader.Failure.self, "\(sequence) after an escape") { try JSONReader.parse(escaped) }
            #expect(throws: JSONReader.Failure.self, "\(sequence) outside a string") { try JSONReader.parse(sequence) }
        }
        #expect(try JSONReader.parse([0x22, 0xF0, 0x9F, 0xA6, 0x8A, 0x22]) == .string("🦊"))
    }

    @Test func readerRefusesLoneSurrogates() throws {
        for lone in [#""\uD800""#, #""\uDC00""#, #""\uDBFF\u0041""#, #""\uD800x""#, #""\uD800\""#,
                     #""\uD800\n""#, #""\uDFFF\uD800""#, #""\uD83D\uD83D""#, #""\uD800\u12""#] {
            #expect(throws: JSONReader.Failure.self, "\(lone)") { try JSONReader.parse(lone) }
        }
        #expect(try JSONReader.parse(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try JSONReader.parse(#""\uFFFF\u0000""#) == .string("\u{FFFF}\u{0}"))
    }

    @Test func readerHandlesNULBytes() throws {
        #expect(try JSONReader.parse(#""a\u0000b""#) == .string("a\u{0}b"))
        let raw: [[UInt8]] = [[0x00], [0x22, 0x00, 0x22], [0x31, 0x00], [0x5B, 0x00, 0x5D], [0x00, 0x31], [0x7B, 0x22, 0x00]]
        for bytes in raw {
            #expect(throws: JSONReader.Failure.self, "\(bytes)") { try JSONReader.parse(bytes) }
        }
        // A NUL read back must be written escaped, and read again the same.
        #expect(Self.checkReader(Array(#"{"\u0000":"\u0000"}"#.utf8), "escaped NUL"))
    }

    // MARK: - The reference-aware decoder, without a store

    @Test func decoderSurvivesMutatedRows() throws {
        let store = try FuzzedStore()
        let rows = try store.connection.read { db in
            try Store.allRows(db)
        }
        let pristine = Dictionary(uniqueKeysWithValues: rows.map { ($0.key, $0) })
        let documents = rows.map { Array($0.data.utf8) }
        let test = "decoderSurvivesMutatedRows"
        var outcomes = Outcomes()
        let cases = Fuzzing.cases(default: 3_000)
        for index in cases {
            Fuzzing.willRun(test, case: index)
            var random = Fuzzing.random(test, case: index)
            let target = store.keys[Gen.int(in: 0..<store.keys.count).draw(&random)]
            let mutations = FuzzGen.mutations.draw(&random)
            var bytes = Array(try #require(pristine[target]).data.utf8)
            for mutation in mutations { mutation.apply(to: &bytes, donors: documents) }
            var edited = pristine
            // What the store hands the decoder is a String: invalid UTF-8 arrives replaced.
            edited[target]?.data = String(decoding: bytes, as: UTF8.self)
            let damaged = edited
            let comment = Fuzzing.reproduction(test, case: index, "\(target) after \(mutations)")

            for key in store.dependents(of: target) {
                let decoder = GraphDecoder(rows: { damaged[$0] })
                let probe = try #require(store.probes[key.typeName])
                _ = outcomes.attempt("decode \(key)", naming: target, comment) {
                    try probe.decode(decoder, try #require(damaged[key]))
                }
            }
            let untouched = store.keys.filter { !(store.closures[$0]?.contains(target) ?? false) }
            if let key = untouched.isEmpty ? nil : untouched[Gen.int(in: 0..<untouched.count).draw(&random)] {
                let decoder = GraphDecoder(rows: { damaged[$0] })
                let probe = try #require(store.probes[key.typeName])
                #expect(try probe.decode(decoder, try #require(damaged[key])) == store.fingerprints[key],
                        comment.with("\(key) does not reference the damaged row"))
            }
        }
        #expect(cases.count < 1_000 || (outcomes.returned > 0 && outcomes.threw > 0), "\(outcomes)")
    }

    // MARK: - Damaged rows, through the public API

    @Test(arguments: FuzzedColumn.allCases)
    func damagedRowGivesClearErrors(_ column: FuzzedColumn) throws {
        let store = try FuzzedStore()
        let test = "damagedRowGivesClearErrors(\(column))"
        let edits = FuzzGen.edit(of: column)
        var outcomes = Outcomes()
        let cases = Fuzzing.cases(default: 60)
        for index in cases {
            Fuzzing.willRun(test, case: index)
            var random = Fuzzing.random(test, case: index)
            let target = store.keys[Gen.int(in: 0..<store.keys.count).draw(&random)]
            let edit = edits.draw(&random)
            let donors = store.keys.filter { $0 != target }.map { store.original(column, of: $0) }
            let value = edit.value(over: store.original(column, of: target), donors: donors)
            let comment = Fuzzing.reproduction(test, case: index, "\(target).\(column) = \(value), by \(edit)")
            guard try store.overwrite(column, of: target, with: value) else {
                outcomes.refusedBySQLite += 1
                continue
            }
            try Self.probe(store, damaged: column, of: target, with: value, comment, &outcomes)
            let isCheckpoint = index % 50 == 0 || index == cases.last
            try Self.probeUntouched(store, damaged: target, all: isCheckpoint, &random, comment)
            try store.restore(target)
            if try store.currentRows() != store.originals {
                Issue.record(comment.with("rows changed besides the damaged one"))
                try store.restoreAll()
            }
        }
        if cases.count >= 50 {
            #expect(outcomes.returned > 0, "\(outcomes)")
            if column != .refs && column != .creationDate {
                #expect(outcomes.threw > 0, "no damage was detected: \(outcomes)")
            }
        }
    }

    /// Every operation that reads the damaged row returns or throws a clear error.
    private static func probe(_ store: FuzzedStore, damaged column: FuzzedColumn, of target: ObjectKey,
                              with value: StoredValue, _ comment: Comment, _ outcomes: inout Outcomes) throws {
        let dependents = store.dependents(of: target)
        // The references column only chooses how a retrieve reads: what it reads must not change
        // (unless it is no longer text: then the row is corrupt).
        var unchanged = false
        if column == .refs, case .text = value { unchanged = true }
        for key in dependents {
            let probe = try #require(store.probes[key.typeName])
            for (name, garage) in [("garage", store.garage), ("garage with unsaved changes", store.pendingGarage)] {
                let object = outcomes.attempt("\(name): retrieve \(key)", naming: target, comment) {
                    try probe.retrieve(garage, key.identifier)
                }
                if let object {
                    #expect(object != nil, comment.with("\(name): retrieve \(key) gave nil for a row that exists"))
                }
                if unchanged && garage === store.garage {
                    // Without unsaved changes, a retrieve reads only the columns it needs.
                    #expect(object == store.fingerprints[key], comment.with("\(name): retrieve \(key)"))
                }
            }
        }
        for type in Set(dependents.map(\.typeName)).sorted() {
            let probe = try #require(store.probes[type])
            let count = store.keys.filter { $0.typeName == type }.count
            if let all = outcomes.attempt("retrieveAll \(type)", naming: target, comment, { try probe.retrieveAll(store.garage) }) {
                #expect(all.count == count, comment.with("retrieveAll \(type)"))
                if unchanged {
                    #expect(all == store.keys.filter { $0.typeName == type }.compactMap { store.fingerprints[$0] },
                            comment.with("retrieveAll \(type)"))
                }
            }
            let claimable = try store.claimableCount(type)
            if let claimed = outcomes.attempt("claim \(type)", naming: target, comment, { try probe.claimAndRelease(store.garage) }) {
                #expect(claimed == claimable, comment.with("claim \(type)"))
            }
        }

        // Metadata reads every column but the data and the references.
        let probe = try #require(store.probes[target.typeName])
        let expected = try #require(store.metadata[target])
        for (name, garage) in [("garage", store.garage), ("garage with unsaved changes", store.pendingGarage)] {
            let metadata = outcomes.attempt("\(name): metadata of \(target)", naming: target, comment) {
                try probe.metadata(garage, target.identifier)
            }
            let status = outcomes.attempt("\(name): sync status of \(target)", naming: target, comment) {
                try probe.syncStatus?(garage, target.identifier)
            }
            switch (column, value) {
            case (.data, .blob), (.refs, .blob):
                // A blob that is not UTF-8 text is corrupt where a whole row is read.
                #expect(metadata.map { $0 == expected } ?? true, comment.with("\(name): metadata of \(target)"))
                #expect(status.map { $0 == nil || $0 == expected.syncStatus } ?? true,
                        comment.with("\(name): sync status of \(target)"))
            case (.data, _), (.refs, _):
                #expect(metadata == expected, comment.with("\(name): metadata of \(target)"))
                let expectedStatus: SyncStatus? = probe.syncStatus == nil ? nil : expected.syncStatus
                #expect(status == .some(expectedStatus), comment.with("\(name): sync status of \(target)"))
            case (.syncStatus, .integer(let raw)):
                // An unknown status must be reported, not read as another one.
                #expect(metadata??.syncStatus == SyncStatus(rawValue: Int(raw)), comment.with("\(name): metadata of \(target)"))
            default:
                #expect(metadata.map { $0 != nil } ?? true, comment.with("\(name): metadata of an existing row is nil"))
            }
        }
        if column == .isEncrypted, case .integer(let flag) = value, flag != 0 {
            #expect(throws: GarageError.missingEncryptionDelegate(typeName: target.typeName, identifier: target.identifier),
                    comment) { try probe.retrieve(store.garage, target.identifier) }
        }
    }

    /// Rows that don't reference the damaged one read as before.
    private static func probeUntouched(_ store: FuzzedStore, damaged target: ObjectKey, all: Bool,
                                       _ random: inout Xoshiro, _ comment: Comment) throws {
        var untouched = store.keys.filter { !(store.closures[$0]?.contains(target) ?? false) && $0 != target }
        if !all && untouched.count > 3 {
            untouched = (0..<3).map { _ in untouched[Gen.int(in: 0..<untouched.count).draw(&random)] }
        }
        for key in untouched {
            let probe = try #require(store.probes[key.typeName])
            #expect(try probe.retrieve(store.garage, key.identifier) == store.fingerprints[key],
                    comment.with("\(key) does not reference the damaged row"))
            #expect(try probe.metadata(store.garage, key.identifier) == store.metadata[key], comment.with("\(key)"))
        }
        guard all else { return }
        let affectedTypes = Set(store.dependents(of: target).map(\.typeName))
        for type in Set(store.keys.map(\.typeName)).subtracting(affectedTypes).sorted() {
            let probe = try #require(store.probes[type])
            #expect(try probe.retrieveAll(store.garage) == store.keys.filter { $0.typeName == type }.compactMap { store.fingerprints[$0] },
                    comment.with("retrieveAll \(type)"))
        }
    }
}

// MARK: - Regressions found by the fuzzer

extension FuzzTests {
    /// A column holding text or a blob where a number belongs (or a blob that is not UTF-8
    /// where text belongs) made every read of the whole row (metadata, sync status, reads with
    /// unsaved changes, ending a claim) throw GRDB's `RowDecodingError`, which names no object.
    /// Now every read that needs the column throws `corruptData` naming the object and the
    /// column, whichever way it reads (with or without unsaved changes), and the reads that
    /// don't need it still work: a retrieve reads the content, metadata and claims the rest.
    @Test(arguments: [
        ("creationDate", "'yesterday'", ["metadata", "sync status", "complete"]),
        ("syncStatus", "'synced'", ["metadata", "sync status", "retrieve", "retrieve with unsaved changes", "complete"]),
        ("isEncrypted", "x'01'", ["metadata", "sync status", "retrieve", "retrieve with unsaved changes", "complete"]),
        ("data", "x'ff'", ["retrieve", "retrieve with unsaved changes"]),
        // The references are a copy of what the data says: only check() reports them.
        ("refs", "x'c0'", []),
    ])
    func mistypedColumnIsCorruptData(column: String, value: String, failing: [String]) throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        let damaged = FuzzModels.author("D1", "Damaged"), intact = FuzzModels.author("D2", "Intact")
        try garage.parkAll([damaged, intact])
        let claim = try garage.claim(Author.self, limit: 10)
        #expect(claim.count == 2)

        // The SQL is a constant of this test: a column name and an SQL literal of the wrong type.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE garage_object SET \(column) = \(value) WHERE identifier = ?",
                           arguments: [damaged.id.uuidString])
        }
        let pending = try Garage(path: path)
        pending.isAutosaveEnabled = false
        try pending.park(Counter(id: 1, value: 1))

        let reads: [(String, () throws -> Void)] = [
            ("metadata", { _ = try garage.metadata(Author.self, identifier: damaged.id) }),
            ("sync status", { _ = try garage.syncStatus(for: damaged) }),
            ("retrieve", { _ = try garage.retrieve(Author.self, identifier: damaged.id) }),
            ("retrieve with unsaved changes", { _ = try pending.retrieve(Author.self, identifier: damaged.id) }),
            ("complete", { _ = try garage.complete(claim) }),
        ]
        for (name, read) in reads {
            guard failing.contains(name) else {
                #expect(throws: Never.self, "\(name)") { try read() }
                continue
            }
            guard let error = #expect(throws: GarageError.self, "\(name)", performing: { try read() }) else { continue }
            guard case let .corruptData(typeName, identifier, reason) = error else {
                Issue.record("\(name): \(error)")
                continue
            }
            #expect(typeName == "Author" && identifier == damaged.id.uuidString, "\(name)")
            #expect(reason.contains(column), "\(name): \(reason)")
            #expect(error.description.contains(damaged.id.uuidString), "\(name)")
        }
        if column == "refs" {
            #expect(try garage.check().problems.contains {
                if case .invalidReferenceList(_, damaged.id.uuidString, _) = $0 { return true }
                return false
            })
        }
        // The other row still reads.
        #expect(try garage.metadata(Author.self, identifier: intact.id)?.syncStatus == (failing.contains("complete") ? .syncing : .synced))
        #expect(try pending.retrieve(Author.self, identifier: intact.id)?.name == "Intact")
    }
}

/// How the operations of a fuzz test ended.
struct Outcomes: CustomStringConvertible {
    var returned = 0
    var threw = 0
    var refusedBySQLite = 0

    var description: String { "\(returned) returned, \(threw) threw, \(refusedBySQLite) values refused by SQLite" }

    /// Runs `body`; an error it throws must name the damaged row `key`.
    mutating func attempt<T>(_ what: String, naming key: ObjectKey, _ comment: Comment, _ body: () throws -> T,
                             sourceLocation: SourceLocation = #_sourceLocation) -> T? {
        do {
            let result = try body()
            returned += 1
            return result
        } catch {
            threw += 1
            expectRowError(error, naming: key, Comment(rawValue: "\(what): \(comment.rawValue)"),
                           sourceLocation: sourceLocation)
            return nil
        }
    }
}

extension FuzzGen {
    private static let anyBytes = Gen.uint8().array(of: 0...24)
    private static let anyValue = Gen.frequency(
        (3, Gen.int64().map { StoredValue.integer($0) }),
        (2, Gen.uint64().map { StoredValue.real(Double(bitPattern: $0)) }),
        (1, Gen.double(in: -1e12...1e12).map { StoredValue.real($0) }),
        (2, anyBytes.map { StoredValue.text($0) }),
        (1, anyBytes.map { StoredValue.blob($0) })
    )

    /// What a case writes over a column of a row.
    static func edit(of column: FuzzedColumn) -> Generator<ColumnEdit, AnySequence<(index: Int, value: Any)>> {
        switch column {
        case .data, .refs:
            return Gen.frequency(
                (8, zip(mutations, Gen.bool(0.1)).map { ColumnEdit.mutate($0, asBlob: $1) }),
                (2, zip(Gen.int(in: 0...1_000), mutation.array(of: 0...2)).map { ColumnEdit.donor($0, $1) }),
                (1, anyValue.map { ColumnEdit.value($0) })
            )
        case .syncStatus, .isEncrypted:
            return Gen.frequency(
                (4, Gen.int64(in: -2...5).map { ColumnEdit.value(.integer($0)) }),
                (2, anyValue.map { ColumnEdit.value($0) }),
                (1, zip(mutations, Gen.bool(0.3)).map { ColumnEdit.mutate($0, asBlob: $1) })
            )
        case .creationDate:
            return Gen.frequency(
                (3, anyValue.map { ColumnEdit.value($0) }),
                (1, zip(mutations, Gen.bool(0.3)).map { ColumnEdit.mutate($0, asBlob: $1) })
            )
        }
    }
}
