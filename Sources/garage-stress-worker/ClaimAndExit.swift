import Foundation
import GarageLite
import GarageStressModels

/// `garage-stress-worker <store-path> claim-and-exit <count>`: claims up to `<count>`
/// `StressDocument`s, prints `CLAIMED <identifiers>`, and exits without ending the claim, as a
/// sync job killed during its upload. `ClaimOwnerTests` then opens the store.
func runClaimAndExit(storePath: String, count: String) -> Never {
    guard let count = Int(count), count >= 0 else {
        print("ERROR the count is a number of documents")
        exit(2)
    }
    do {
        let garage = try TestStores.open(path: storePath)
        let claim = try garage.claim(StressDocument.self, limit: count)
        print("CLAIMED \(claim.identifiers.joined(separator: ","))")
        withExtendedLifetime(garage) { exit(0) }
    } catch {
        print("ERROR claim-and-exit threw: \(error)")
        exit(1)
    }
}
