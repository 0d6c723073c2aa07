// The work behind the entry points of Garage+Registering.swift (the façade, at the root): the store
// calls they run and their helpers. Nothing here is public; the root files hold the API.
import Foundation
import GarageLiteCore

extension Garage {
    /// The moves of a read-only garage, which can't write them: every read sees them, as it
    /// sees unsaved changes, each time. Returns how many objects they move.
    func readingThrough(_ prepared: (ChangeSet, Int)) -> Int {
        store.readThrough(prepared.0)
        return prepared.1
    }

    func renaming<T: Codable & SendableMetatype>(
        _ type: T.Type, _ formerNames: [String]
    ) throws -> (String, @Sendable (StoreView) throws -> (ChangeSet, Int)) {
        let typeName = try storedTypeName(T.self, listing: "move objects to")
        let formerNames = formerNames.filter { $0 != typeName }
        for name in formerNames {
            try Identity.checkCanMigrate(from: name, to: T.self)
            try Identity.checkNotOwned(name, byOtherThan: T.self)
        }
        try register(T.self, formerNames: formerNames)
        let reseal = resealer()
        let encryption = configuration().encryption
        return ("move \(formerNames.joined(separator: ", ")) to \(typeName)", { view in
            var changes = ChangeSet()
            var moved = 0
            for name in formerNames {
                let count = try view.count(ofType: name)
                guard count > 0 else { continue }
                try Self.checkResealable(name, to: typeName, in: view, with: encryption)
                moved += count
                changes.record(.renameType(from: name, to: typeName), resealing: reseal)
            }
            return (changes, moved)
        })
    }

    /// Registers `T`, and `formerNames` as its names.
    func register<T: Codable & SendableMetatype>(_ type: T.Type, formerNames: [String]) throws {
        var registry = state.read(\.registry)
        try registry.register(type, formerNames: formerNames)
        let registered = registry
        state.write { state in
            // Registrations made meanwhile, by other threads, are kept.
            var merged = registered
            merged.merge(state.registry)
            state.registry = merged
        }
    }

}
