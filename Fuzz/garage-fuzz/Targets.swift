import Foundation
import GarageFixtureModels
import GarageLite
import GarageToolSupport

/// A fuzz target: one input in, no crash out. Errors are expected (the input is garbage); a
/// trap, a sanitizer report or a hang is a finding.
struct FuzzTarget: Sendable {
    let name: String
    let summary: String
    let run: @Sendable ([UInt8]) -> Void

    static let all: [FuzzTarget] = [records, row, garageStorage, whereExpression, importLine, query]

    static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    /// The input is an object's JSON, imported as a record (the JSON reader and the import's
    /// checks) under one of the model types, then retrieved (the strict row reader, the graph
    /// decoder with its references, GarageStorage's shapes, `LegacyKeyed`, `@Default`,
    /// `@Polymorphic`), listed as records, and checked.
    static let records = FuzzTarget(
        name: "records",
        summary: "an object's JSON, imported as a record and retrieved as each model shape"
    ) { bytes in
        guard let first = bytes.first else { return }
        let json = String(decoding: bytes.dropFirst(), as: UTF8.self)
        let garage = RecordsStore.shared.next()
        let identifier = "f\(RecordsStore.shared.counter)"
        // The first byte picks the type the JSON is stored under.
        switch first % 4 {
        case 0:
            _ = try? garage.importRecords([ObjectRecord(key: ObjectKey(typeName: "FuzzParent", identifier: identifier), json: json)])
            _ = try? garage.retrieve(FuzzParent.self, identifier: identifier)
        case 1:
            _ = try? garage.importRecords([ObjectRecord(key: ObjectKey(typeName: "FuzzChild", identifier: identifier), json: json)])
            _ = try? garage.retrieve(FuzzChild.self, identifier: identifier)
            _ = try? garage.retrieve(FuzzParent.self, identifier: "p")
        case 2:
            _ = try? garage.importRecords([ObjectRecord(key: ObjectKey(typeName: "FuzzContact", identifier: identifier), json: json)])
            _ = try? garage.retrieve(FuzzContact.self, identifier: identifier)
        default:
            _ = try? garage.importRecords([ObjectRecord(key: ObjectKey(typeName: "Relative", identifier: identifier), json: json)])
            _ = try? garage.retrieve(FixtureGarageStorage.Relative.self, identifier: identifier)
        }
        _ = try? garage.records(after: nil, limit: 10)
        _ = try? garage.check(maximumProblems: 5)
    }

    /// The input is a GarageStorage (Core Data) store file, imported.
    static let garageStorage = FuzzTarget(
        name: "garagestorage",
        summary: "a GarageStorage (Core Data) store file, imported into a new garage"
    ) { bytes in
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("garage-fuzz-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("store.garagestorage")
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: file.path + suffix)
        }
        guard (try? Data(bytes).write(to: file)) != nil, let garage = try? Garage.inMemory() else { return }
        _ = try? garage.importGarageStorageStore(at: file)
        _ = try? garage.retrieveAll(FixtureGarageStorage.Relative.self)
        _ = try? garage.check(maximumProblems: 5)
    }
}

extension FuzzTarget {
    /// The input is a `garage list --where` expression: parsed (`WhereExpression`), and when it
    /// reads, run as a query of records (the query's checks, its SQL, its reading of rows).
    static let whereExpression = FuzzTarget(
        name: "where",
        summary: "a `garage list --where` expression, parsed and run as a query of records"
    ) { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        guard let predicate = try? WhereExpression.parse(text) else { return }
        let garage = RecordsStore.shared.current()
        for type in ["FuzzParent", "FuzzChild", "FuzzContact"] {
            _ = try? garage.records(matching: Query(recordsOf: type).filter(predicate).limit(5))
        }
        _ = try? garage.retrieve(Query(FuzzChild.self).filter(predicate))
        _ = try? garage.count(Query(FuzzParent.self).filter(predicate))
    }

    /// The input is a line of `garage import`: read as the tool reads it (`ExportLine`, then its
    /// record), and imported.
    static let importLine = FuzzTarget(
        name: "importline",
        summary: "a line of `garage import`, read as the tool reads it and imported"
    ) { bytes in
        guard let line = try? JSONDecoder().decode(ExportLine.self, from: Data(bytes)),
              let record = try? line.record(now: Date(timeIntervalSince1970: 1_800_000_000)) else { return }
        let garage = RecordsStore.shared.next()
        _ = try? garage.importRecords([record])
        _ = try? garage.record(record.key)
        _ = try? garage.check(maximumProblems: 5)
    }
}

/// The garage the records target imports into: a store with a parent and its children parked,
/// made anew every few thousand inputs so that it doesn't grow without end.
final class RecordsStore: Sendable {
    static let shared = RecordsStore()

    private let state = Protected(State())

    private struct State {
        var garage: Garage?
        var counter = 0
    }

    var counter: Int { state.read { $0.counter } }

    /// The garage as it is, for a target that only reads.
    func current() -> Garage {
        state.read { $0.garage } ?? next()
    }

    func next() -> Garage {
        state.write { state in
            state.counter += 1
            if let garage = state.garage, state.counter % 5_000 != 0 { return garage }
            // The fuzzer can't go on without its store: a failure here is the harness's, not a finding.
            let garage = try! Garage.inMemory()
            try! garage.register(FuzzDog.self, FuzzCat.self)
            try! garage.park(FuzzParent(id: "p"))
            try! garage.park(FuzzContact(id: "k", fullName: "K", isFavorite: Default(wrappedValue: true),
                                         pets: [FuzzDog(name: "Rex", barks: true), FuzzCat(name: "Tom", lives: 9)],
                                         owner: FuzzChild(id: "c0", name: "child 0", score: 0, tags: ["a", "b"])))
            state.garage = garage
            return garage
        }
    }
}
