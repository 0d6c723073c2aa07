import Foundation
import GarageLite

// A small domain for the tests: people with family, a library with books and authors,
// a tree of branches, memos for sync jobs, and a few types that exercise identity rules
// (more of those, one rule each, in EdgeCaseModels.swift).

final class Person: Mappable, Syncable, @unchecked Sendable {
    var id: String { name }
    var name: String
    var age: Int
    var address: Address?
    var birthdate: Date
    var importantDates: [Date] = []
    var siblings: [Person] = []
    var brother: Person?
    var syncStatus: SyncStatus = .undetermined

    init(name: String, age: Int = 30, address: Address? = nil,
         birthdate: Date = Date(timeIntervalSinceReferenceDate: 12_345.678_9)) {
        self.name = name
        self.age = age
        self.address = address
        self.birthdate = birthdate
    }
}

struct Address: Codable, Hashable, Sendable {
    var street: String
    var city: String
    var zip: String
}

struct Author: Codable, Identifiable, Hashable, Syncable, Sendable {
    var id: UUID
    var name: String
    var syncStatus: SyncStatus = .notSynced
}

struct Book: Codable, Identifiable, Syncable, Sendable {
    var id: Int
    var title: String
    var author: Author
    var coAuthors: [Author] = []
    var syncStatus: SyncStatus = .notSynced
}

/// Authors everywhere a reference may hide.
struct Shelf: Codable, Identifiable, Sendable {
    var id: String
    var byGenre: [String: Author] = [:]
    var byRank: [Int: Author] = [:]
    var favourites: Set<Author> = []
    var rows: [[Author]] = []
    var optionalAuthors: [Author?] = []
    var display: Display?

    /// Not identifiable: stored inline, but its author is still a reference.
    struct Display: Codable, Sendable {
        var label: String
        var featured: Author
    }
}

struct Branch: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var leaves: Int
    var children: [Branch] = []
}

struct Tree: Codable, Identifiable, Sendable {
    var id: String
    var root: Branch
}

/// Hashable only: its identifier comes from its content.
struct Note: Codable, Hashable, Syncable, Sendable {
    var text: String
    var tags: [String]
    var syncStatus: SyncStatus = .notSynced
}

/// Neither Identifiable nor Hashable.
struct Anonymous: Codable, Sendable {
    var value: Int
}

/// An ID type the garage can't turn into an identifier.
struct Coordinates: Codable, Hashable, Sendable {
    var x: Int
    var y: Int
}

struct Place: Codable, Identifiable, Sendable {
    var id: Coordinates
    var name: String
}

struct Trip: Codable, Identifiable, Sendable {
    var id: String
    var stops: [Stop]

    struct Stop: Codable, Sendable {
        var day: Int
        var place: Place
    }
}

/// A required and an optional reference, for missing-row tests.
struct Loan: Codable, Identifiable, Sendable {
    var id: String
    var book: Book
    var guarantor: Author?
}

final class Friend: Codable, Identifiable, @unchecked Sendable {
    var id: String
    var friend: Friend?

    init(id: String) {
        self.id = id
    }
}

struct Counter: Codable, Identifiable, Sendable {
    var id: Int
    var value: Int
}

/// `Counter` under another name, for `migrateAll`.
struct RenamedCounter: Codable, Identifiable {
    var id: Int
    var value: Int
}

/// A memo that sync jobs claim and upload.
struct Memo: Codable, Identifiable, Syncable, Sendable, Equatable {
    var id: String
    var text: String
    var syncStatus: SyncStatus = .notSynced
}
