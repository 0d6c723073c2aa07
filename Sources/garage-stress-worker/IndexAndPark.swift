import Foundation
import GarageLite
import GarageStressModels

/// `garage-stress-worker <store-path> index-and-park <identifier>`: opens the store, declares
/// the indexes every opener of `IndexedOpenersTests` declares (a value index on `version`, a
/// text index on `body`: already there after the first opener, so nothing is created), parks
/// one `StressDocument`, prints `PARKED <identifier>` and closes the garage, as an app that
/// declares its indexes at launch and quits. The test's own garage, open all along, parks next.
func runIndexAndPark(storePath: String, identifier: String) -> Never {
    do {
        try withExtendedLifetime(TestStores.open(path: storePath)) { garage in
            try garage.index(StressDocument.self, on: Field("version"))
            try garage.textIndex(StressDocument.self, on: Field("body"))
            try garage.park(StressDocument(id: identifier, version: 1, body: "parked by opener \(identifier)",
                                           syncStatus: .notSynced))
        }
        print("PARKED \(identifier)")
        exit(0)
    } catch {
        print("ERROR index-and-park threw: \(error)")
        exit(1)
    }
}
