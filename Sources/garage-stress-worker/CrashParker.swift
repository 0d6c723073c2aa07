// The crash parker: the child process of the crash-safety test (CrashSafetyTests), which
// kills it with SIGKILL at a random moment.
//
//     garage-stress-worker <store-path> crash <seed> <log-path>
//
// It opens the store, appends `OPEN <seed>` to the log, then parks batches of graphs until it
// is killed, choosing each operation with a generator seeded by `<seed>`:
//
//   park         one parent graph, autosave on: one `park` call
//   save         a few graphs parked with autosave disabled (`withAutosaveDisabled`), then `save()`
//   transaction  a few graphs parked inside `transaction { }`
//   parkAll      a few graphs in one `parkAll` with `isAutosaveEnabled = false`, then `save()`
//   stream       1000 to 2500 graphs in one `parkAll` (autosave on): the streaming write path;
//                one in five has notes ten times longer, so that the transaction outgrows
//                SQLite's page cache and writes pages to the WAL before it commits
//   repark       a batch this process committed before, parked again with the next generation
//
// Before an operation it appends `BEGIN <kind> <batch> <size> <generation>`, and after the
// call that commits it returns, `DONE <kind> <batch> <size> <generation>`. Each line is one
// `write(2)` to a descriptor opened with `O_APPEND`: a line written is in the file even if the
// process is killed right after. A kill between a commit and its `DONE` line leaves a batch
// committed but not logged, which is fine: the test checks that everything logged is in the
// store, and that everything in the store is complete.
//
// Completeness can be checked from the store alone. Batch `<seed>.<n>` of size `s` holds the
// parents `<seed>.<n>.0` ..< `<seed>.<n>.<s-1>`; each parent records its batch, the batch size,
// its generation, and the identifiers of its children and grandchildren, which carry the same
// generation. A committed batch therefore has exactly `s` parents, all of one generation,
// each with all its children and grandchildren, and no row of the batch exists without its
// parent. Identifiers begin with `<seed>.`, so that runs with different seeds share a store.
//
// Anything unexpected prints an `ERROR ...` line and exits with status 1; the process never
// ends otherwise.
import Foundation
import GarageLite
import GarageStressModels

/// A grandchild: its own row, referenced by its parent child.
struct CrashGrandchild: Codable, Identifiable, Sendable {
    var id: String
    var parent: String
    var generation: Int
}

/// A child: its own row, referenced by its parent.
struct CrashChild: Codable, Identifiable, Sendable {
    var id: String
    var parent: String
    var generation: Int
    var note: String
    var grandchild: CrashGrandchild?
}

/// The root of a graph; it lists what the graph must hold.
struct CrashParent: Codable, Identifiable, Sendable {
    var id: String
    var batch: String
    var batchSize: Int
    var generation: Int
    var childIDs: [String]
    var grandchildIDs: [String]
    var children: [CrashChild]
}

/// A batch this process committed: enough to park it again with the next generation.
private struct CommittedBatch {
    var id: String
    var shapes: [[Bool]]    // per parent, per child: whether it has a grandchild
    var noteLength: Int
    var generation: Int
}

private let crashWords = ["anchor", "bolt", "crate", "dock", "engine", "ferry", "gauge", "hull"]

private func crashNote(length: Int, using random: inout SplitMix64) -> String {
    let word = crashWords[Int(random.next() % UInt64(crashWords.count))] + " "
    return String(repeating: word, count: length / word.count + 1)
}

/// The graphs of batch `batch`, of generation `generation`.
private func crashParents(
    batch: String, shapes: [[Bool]], generation: Int, noteLength: Int, using random: inout SplitMix64
) -> [CrashParent] {
    shapes.enumerated().map { index, grandchildren in
        let parentID = "\(batch).\(index)"
        let children = grandchildren.enumerated().map { childIndex, hasGrandchild in
            let childID = "\(parentID).c\(childIndex)"
            return CrashChild(
                id: childID, parent: parentID, generation: generation,
                note: crashNote(length: noteLength, using: &random),
                grandchild: hasGrandchild
                    ? CrashGrandchild(id: "\(childID).g", parent: childID, generation: generation) : nil)
        }
        return CrashParent(
            id: parentID, batch: batch, batchSize: shapes.count, generation: generation,
            childIDs: children.map(\.id), grandchildIDs: children.compactMap(\.grandchild?.id),
            children: children)
    }
}

/// Parks graphs into the store at `storePath` until the process is killed.
func runCrashParker(storePath: String, seed: String, logPath: String) -> Never {
    guard let log = AppendLog(path: logPath) else {
        print("ERROR cannot open the log \(logPath)")
        exit(1)
    }
    func append(_ line: String) {
        if !log.append(line) {
            print("ERROR cannot write the log \(logPath)")
            exit(1)
        }
    }
    var random = SplitMix64(seed: seed)
    func roll(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

    let garage: Garage
    do {
        garage = try TestStores.open(path: storePath)
    } catch {
        print("ERROR crash \(seed): opening the store threw: \(error)")
        exit(1)
    }
    append("OPEN \(seed)")

    var committed: [CommittedBatch] = []
    var batchNumber = 0
    while true {
        let choice = roll(0...99)
        var kind: String
        var batch: CommittedBatch
        if choice < 15, !committed.isEmpty {
            kind = "repark"
            let index = roll(0...(committed.count - 1))
            batch = committed[index]
            batch.generation += 1
        } else {
            let parents: Int
            let maxChildren: Int
            switch choice {
            case ..<45: kind = "park"; parents = 1; maxChildren = 20
            case ..<60: kind = "save"; parents = roll(2...8); maxChildren = 8
            case ..<75: kind = "transaction"; parents = roll(2...8); maxChildren = 8
            case ..<90: kind = "parkAll"; parents = roll(2...40); maxChildren = 5
            default: kind = "stream"; parents = roll(1_000...2_500); maxChildren = 2
            }
            let minChildren = kind == "park" ? 3 : 1
            let shapes = (0..<parents).map { _ in
                (0..<roll(minChildren...maxChildren)).map { _ in roll(0...2) == 0 }
            }
            batch = CommittedBatch(
                id: "\(seed).\(batchNumber)", shapes: shapes,
                noteLength: roll(0...400) * (kind == "stream" && roll(0...4) == 0 ? 10 : 1), generation: 1)
            batchNumber += 1
        }
        let graphs = crashParents(
            batch: batch.id, shapes: batch.shapes, generation: batch.generation,
            noteLength: batch.noteLength, using: &random)
        let summary = "\(kind) \(batch.id) \(graphs.count) \(batch.generation)"
        append("BEGIN \(summary)")
        do {
            switch kind {
            case "park":
                try garage.park(graphs[0])
            case "save":
                try garage.withAutosaveDisabled {
                    for graph in graphs { try garage.park(graph) }
                }
                try garage.save()
            case "transaction":
                try garage.transaction {
                    for graph in graphs { try garage.park(graph) }
                }
            case "parkAll":
                garage.isAutosaveEnabled = false
                try garage.parkAll(graphs)
                garage.isAutosaveEnabled = true
                try garage.save()
            default: // stream, repark
                try garage.parkAll(graphs)
            }
        } catch {
            print("ERROR crash \(seed): \(summary) threw: \(error)")
            exit(1)
        }
        append("DONE \(summary)")
        if kind == "repark", let index = committed.firstIndex(where: { $0.id == batch.id }) {
            committed[index] = batch
        } else {
            committed.append(batch)
        }
    }
}
