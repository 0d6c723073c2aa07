import Foundation
import GarageLiteCore
import Testing

/// The table of versions handed out (``HandedOutVersions``): what it remembers, and for how long.
@Suite("The table of versions handed out", .firstPassOnly)
struct HandedOutVersionsTests {
    private func key(_ index: Int) -> ObjectKey { ObjectKey(typeName: "Note", identifier: "n\(index)") }

    private func add(_ table: HandedOutVersions, _ rows: [(Int, UInt64, Int64)]) {
        var batch = HandedOutVersions.Batch()
        for (index, data, revision) in rows { batch.record(key(index), dataHash: data, revision: revision) }
        table.add(batch)
    }

    private func revision(_ table: HandedOutVersions, _ index: Int, _ data: UInt64) -> Int64? {
        table.revisions(of: [(key(index), data)])[0]
    }

    @Test func aVersionIsFoundByItsRowAndItsJSONOnly() {
        let table = HandedOutVersions()
        #expect(revision(table, 1, 11) == nil)
        add(table, [(1, 11, 3), (2, 22, 5)])
        #expect(revision(table, 1, 11) == 3)
        #expect(revision(table, 2, 22) == 5)
        #expect(revision(table, 1, 22) == nil)     // another row's JSON
        #expect(revision(table, 3, 11) == nil)     // a row never handed out
        // The same JSON read again at a later revision (a status change): the later one.
        add(table, [(1, 11, 7)])
        add(table, [(1, 11, 6)])
        #expect(revision(table, 1, 11) == 7)
        let found = table.revisions(of: [(key(2), 22), (key(1), 99), (key(1), 11)])
        #expect(found == [0: 5, 2: 7])
    }

    @Test func aRowKeepsItsLastFourVersions() {
        let table = HandedOutVersions()
        for version in 1...4 { add(table, [(1, UInt64(100 + version), Int64(version))]) }
        for version in 1...4 { #expect(revision(table, 1, UInt64(100 + version)) == Int64(version)) }
        // A fifth takes the place of the oldest (the lowest revision).
        add(table, [(1, 105, 5)])
        #expect(revision(table, 1, 101) == nil)
        for version in 2...5 { #expect(revision(table, 1, UInt64(100 + version)) == Int64(version)) }
    }

    @Test func twoGenerationsAreRememberedAndTheThirdForgetsTheFirst() {
        let table = HandedOutVersions()
        let size = HandedOutVersions.generationSize
        add(table, (0..<size).map { ($0, UInt64($0 + 1), 1) })
        #expect(revision(table, 0, 1) == 1 && revision(table, size - 1, UInt64(size)) == 1)
        // The next row starts a second generation: the first is still found.
        add(table, (size..<(2 * size)).map { ($0, UInt64($0 + 1), 2) })
        #expect(revision(table, 0, 1) == 1)
        #expect(revision(table, 2 * size - 1, UInt64(2 * size)) == 2)
        // A third: the first generation's rows are forgotten, the second's remembered.
        add(table, [(2 * size, 1, 3)])
        #expect(revision(table, 0, 1) == nil)
        #expect(revision(table, size, UInt64(size + 1)) == 2)
        #expect(revision(table, 2 * size, 1) == 3)
    }
}
