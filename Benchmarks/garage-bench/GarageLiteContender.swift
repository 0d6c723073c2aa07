import Foundation
import GarageLite

/// GarageLite, used as its README says.
final class GarageLiteContender: Contender {
    private var garage: Garage?

    init(path: String) throws {
        garage = try Garage(path: path)
    }

    private var store: Garage {
        get throws {
            guard let garage else { throw BenchFailure("GarageLite store used after close") }
            return garage
        }
    }

    func parkAll(_ people: [BenchPerson]) throws {
        try store.parkAll(people)
    }

    func park(_ person: BenchPerson) throws {
        try store.park(person) // autosave is on: one commit per park
    }

    func parkAll(teams: [BenchTeam]) throws {
        try store.parkAll(teams)
    }

    func retrieve(id: String) throws -> BenchPerson? {
        try store.retrieve(BenchPerson.self, identifier: id)
    }

    func retrieveAll() throws -> [BenchPerson] {
        try store.retrieveAll(BenchPerson.self)
    }

    func retrieveTeam(id: String) throws -> BenchTeam? {
        try store.retrieve(BenchTeam.self, identifier: id)
    }

    func countNotSynced() throws -> Int {
        try store.count(BenchPerson.self, withStatus: .notSynced)
    }

    func retrieveNotSynced() throws -> [BenchPerson] {
        try store.retrieveAll(BenchPerson.self, withStatus: .notSynced)
    }

    func claimAndComplete(limit: Int) throws -> Int {
        let garage = try store
        let claim = try garage.claim(BenchPerson.self, limit: limit)
        if claim.isEmpty { return 0 }
        return try garage.complete(claim).synced.count
    }

    func forEachPerson(_ body: (BenchPerson) throws -> Void) throws {
        try store.forEach(BenchPerson.self, body) // default batch size: 1000 objects
    }

    func close() throws {
        garage = nil // the garage closes its connections when released
    }
}
