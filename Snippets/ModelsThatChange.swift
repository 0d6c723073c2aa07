// Models that change without a migration: a renamed property, properties added later, a
// renamed type, and values of several types.

import GarageLite

// snippet.hide
let garage = try Garage.inMemory()

/// The type `Client` was called `Patient`.
struct Client: Codable, Identifiable {
    var id: String
    var name: String
}

class Person: Codable, Identifiable {
    var id: String
    init(id: String) { self.id = id }
}
final class Student: Person {}
final class Teacher: Person {}

protocol Pet: Codable { var name: String { get } }
struct Dog: Pet { var name: String }
struct Cat: Pet { var name: String }
// snippet.show
// snippet.changes
struct Contact: Codable, Identifiable, LegacyKeyed {
    static let legacyKeys = ["fullName": ["name"]]            // renamed: `fullName` was `name`
    var id: String
    var fullName: String
    @Default<FalseByDefault> var isFavorite: Bool              // added later: old contacts read false
    @Default<EmptyByDefault<[String]>> var tags: [String]      // a provider of your own: DefaultValue
}                                                              // removed properties are ignored

// A renamed type: `Client` was `Patient`. Moves the patients (and the references to them) once;
// every later launch it costs one indexed lookup.
try garage.register(Client.self, formerTypeNames: ["Patient"])
// snippet.end

// snippet.hierarchies
try garage.register(Student.self, Teacher.self, Dog.self, Cat.self)

struct School: Codable, Identifiable {
    var id: String
    var people: [Person]                   // Students and Teachers, subclasses of Person
    @Polymorphic var pets: [any Pet]       // Dogs and Cats; also (any Pet)? and [String: any Pet]
}
// snippet.end
// snippet.hide

try garage.park(School(id: "s1", people: [Student(id: "ann"), Teacher(id: "bo")], pets: [Dog(name: "Rex"), Cat(name: "Tom")]))
let school = try garage.retrieve(School.self, identifier: "s1")!
print(school.people.map { type(of: $0) }, school.pets.map { type(of: $0) })   // [Student, Teacher] [Dog, Cat]
