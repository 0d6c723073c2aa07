import Foundation
import GarageLite
import GarageStressModels

/// `garage-stress-worker <store-path> park-and-exit <count>`: parks `<count>` documents,
/// `p0` ..< `p<count>`, one commit each, prints `DONE <count>`, and calls `exit(0)` with the
/// garage still open, as an app that holds its garage until it quits: the garage is never
/// deinitialized. `DurabilityTests` reads the store file alone afterwards, which holds every
/// document only if the garage checkpointed its log when the process exited.
func runParkAndExit(storePath: String, count: String) -> Never {
    guard let count = Int(count), count >= 0 else {
        print("ERROR the count is a number of documents")
        exit(2)
    }
    do {
        let garage = try TestStores.open(path: storePath)
        for index in 0..<count {
            try garage.park(StressDocument(id: "p\(index)", version: index, body: "parked before exit \(index)",
                                           syncStatus: .notSynced))
        }
        print("DONE \(count)")
        withExtendedLifetime(garage) { exit(0) }
    } catch {
        print("ERROR park-and-exit threw: \(error)")
        exit(1)
    }
}
