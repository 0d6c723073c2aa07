import Foundation

// Registering types: the types a garage reads back where another type is declared
// (Identity/RegisteredTypes.swift), and the former names of renamed types.
extension Garage {
    /// Registers types whose instances the garage stores where another type is declared, so
    /// that they read back as themselves: subclasses parked where their class is declared, and
    /// the values of ``Polymorphic`` properties.
    ///
    /// ```swift
    /// class Person: Codable { ... }
    /// class Student: Person { ... }       // overrides init(from:) and encode(to:)
    /// class Teacher: Person { ... }
    ///
    /// try garage.register(Student.self, Teacher.self)
    /// try garage.park(School(id: "s1", people: [student, teacher]))      // people: [Person]
    /// let school = try garage.retrieve(School.self, identifier: "s1")
    /// school?.people[0] is Student       // true
    /// ```
    ///
    /// A registered subclass instance is stored with its type name, inline or, when it is
    /// `Identifiable`, in the row of its own that it gets under its class's name (so
    /// `retrieveAll(Person.self)` returns the students and the teachers). Without the
    /// registration, parking one throws ``GarageError/unregisteredType(typeName:declaredType:)``
    /// instead of storing a `Person` that would lose what `Student` adds.
    ///
    /// Register at launch, before parking or retrieving, in every process that opens the
    /// store. Registering a type twice does nothing.
    ///
    /// - throws: ``GarageError/typeNameCollision(typeName:type:existingType:)`` when another
    ///   type is stored under the same name.
    public func register<each T: Codable & SendableMetatype>(_ types: repeat (each T).Type) throws {
        var registry = state.read(\.registry)
        for type in repeat each types {
            try registry.register(type)
        }
        let registered = registry
        state.write { state in
            // Registrations made meanwhile, by other threads, are kept.
            var merged = registered
            merged.merge(state.registry)
            state.registry = merged
        }
    }

    /// Moves the objects stored under the former names of type `T` to its name, with the
    /// references to them, so that a type can be renamed without a migration step of the
    /// app's own: SwiftLocal's class refactor.
    ///
    /// ```swift
    /// // `Human` was called `Person`.
    /// try garage.register(Human.self, formerTypeNames: "Person")
    /// ```
    ///
    /// Call it at launch, in every process that opens the store, with every name the type had.
    /// When nothing is stored under the former names, as on every launch after the first, it
    /// costs one indexed lookup per name and writes nothing. The move is
    /// ``migrateAll(fromOldClassName:to:)-73yt5``'s, for each name that holds objects, in one
    /// transaction: written to the store now (with the garage's unsaved changes, as any
    /// autosaved change), whatever the autosave setting and the transactions in progress,
    /// because a rolled-back move would leave the objects out of sight under their old name.
    ///
    /// - returns: The number of objects moved.
    @discardableResult
    public func register<T>(_ type: T.Type, formerTypeNames: String...) throws -> Int {
        try run(renaming(T.self, formerTypeNames))
    }

    /// Moves the objects stored under the former names of type `T` to its name (see the
    /// synchronous variant), without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func register<T>(_ type: T.Type, formerTypeNames: String...) async throws -> Int {
        try await run(renaming(T.self, formerTypeNames))
    }

    private func renaming<T>(_ type: T.Type, _ formerNames: [String]) throws -> StoreWork<Int> {
        let typeName = try Identity.typeName(T.self)
        let formerNames = formerNames.filter { $0 != typeName }
        for name in formerNames {
            try Identity.checkCanMigrate(from: name, to: T.self)
        }
        return store.saving("move \(formerNames.joined(separator: ", ")) to \(typeName)", preparing: { view in
            var changes = ChangeSet()
            var moved = 0
            for name in formerNames {
                let count = try view.count(ofType: name)
                guard count > 0 else { continue }
                moved += count
                changes.record(.renameType(from: name, to: typeName))
            }
            return (changes, moved)
        })
    }
}
