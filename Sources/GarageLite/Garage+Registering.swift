import Foundation
import GarageLiteCore

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
        for type in repeat each types {
            try register(type, formerNames: [])
        }
    }

    /// Registers `T`, a type that was renamed, with the names it had: the objects stored under
    /// them move to its name, with the references to them, and values stored with them (as a
    /// subclass instance or a ``Polymorphic`` value) read as `T`. SwiftLocal's class refactor,
    /// with no migration step of the app's own.
    ///
    /// ```swift
    /// // `Client` was called `Patient`.
    /// try garage.register(Client.self, formerTypeNames: ["Patient"])
    /// ```
    ///
    /// Call it at launch, in every process that opens the store, with every name the type had.
    /// It registers `T` as ``register(_:)`` does. A ``readOnly(path:encryptionKey:)`` garage
    /// can't move anything: it reads the objects under their former names as `T`'s, lazily, on
    /// every read, and the file stays as it is. Otherwise the move is
    /// ``migrateAll(fromOldClassName:to:)-73yt5``'s, for each name that holds objects, recorded as
    /// any change: written at once with autosave on (the default); with the transaction it runs
    /// in, or the unsaved changes, otherwise. Until it is written, the garage reads the objects
    /// under `T` all the same; if it is rolled back or discarded, they stay under their former
    /// name until the next call. When nothing is stored under the former names, as on every
    /// launch after the first, it costs one indexed lookup per name and changes nothing.
    ///
    /// - returns: The number of objects moved.
    /// - throws: ``GarageError/ambiguousMigration(oldName:type:otherType:)`` when another type of
    ///   this process is stored under one of the names: it is that type's, not a former one.
    @discardableResult
    public func register<T: Codable & SendableMetatype>(_ type: T.Type, formerTypeNames: [String]) throws -> Int {
        let (operation, prepare) = try renaming(T.self, formerTypeNames)
        guard store.isReadOnly else { return try run(recording(operation, preparing: prepare)) }
        return readingThrough(try run(reading(operation, prepare)))
    }

    /// Registers `T`, a type that was renamed, with the names it had (see the synchronous
    /// variant), without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func register<T: Codable & SendableMetatype>(
        _ type: T.Type, formerTypeNames: [String]
    ) async throws -> Int {
        let (operation, prepare) = try renaming(T.self, formerTypeNames)
        guard store.isReadOnly else { return try await run(recording(operation, preparing: prepare)) }
        return readingThrough(try await run(reading(operation, prepare)))
    }

    /// The type name the objects of `T` are stored under in this garage: a registered
    /// subclass's are rows of the `Identifiable` class it descends from (see ``register(_:)``).
    ///
    /// - parameter listing: The operation, when it works on every object of the type (counts,
    ///   lists, claims): a registered subclass's objects can't be told from the others of its
    ///   class's rows there, and ``GarageError/storedAsItsClass(typeName:className:operation:)``
    ///   is thrown.
    /// The identifier `value` is stored under (its `id`, as a key's text): for the sync server,
    /// which checks that an uploaded object is the one its change names.
    package static func identifier<I: Identifiable>(of value: I) throws -> String {
        try Identity.identifier(of: value)
    }

    package func storedTypeName<T>(_ type: T.Type, listing: String? = nil) throws -> String {
        guard let storedClass = state.read({ $0.registry.storedClass(of: T.self) }) else {
            return try Identity.typeName(T.self)
        }
        if let listing {
            throw GarageError.storedAsItsClass(
                typeName: Identity.displayName(T.self), className: storedClass.className, operation: listing)
        }
        return storedClass.name
    }
}
