import Foundation
@testable import GarageLite

/// Two garages on one file in a fresh directory: A, the app's screen, and B, another writer.
struct GaragePair {
    let directory: TemporaryDirectory
    let a: Garage
    let b: Garage

    init() throws {
        directory = try TemporaryDirectory()
        let path = directory.path("store.garage")
        a = try TestEngine.garage(path: path)
        b = try TestEngine.garage(path: path)
    }
}
