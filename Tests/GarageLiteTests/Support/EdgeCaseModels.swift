import Foundation
@testable import GarageLite

// Types that exercise one rule each (identity, depth, generics, migration, size), apart from
// the domain of TestModels.swift. Several tests check their stored type names as written here
// (`Volume`, `Link`, `Labelled`, `Generic<Int>`, `Crate<Int>`, `ChainLink`, `Shipment`,
// `Gauge`): renaming one changes what those tests read.

// MARK: - Parking and retrieving (GarageObjectsTests)

/// Hashable only, with a set and a dictionary keyed by a struct, whose order must not change
/// its content identifier.
struct Labelled: Codable, Hashable {
    var labels: Set<String>
    var scores: [Coordinates: Int] = [:]
}

/// `SyncStatus` properties besides `syncStatus`: only the one so named is kept out of the JSON.
struct Upload: Codable, Identifiable, Syncable {
    var id: String
    var syncStatus: SyncStatus
    var serverStatus: SyncStatus
    var lastStatus: SyncStatus?
}

/// An optional `id`: refused whatever its value.
struct MaybeIdentified: Codable, Identifiable {
    var id: String?
}

/// A class whose chain of references is as long as a test makes it.
final class Link: Codable, Identifiable {
    var id: Int
    var next: Link?

    init(id: Int, next: Link?) {
        self.id = id
        self.next = next
    }
}

/// Not identifiable, nested in itself: a value as deep as a test makes it.
final class Nested: Codable {
    var child: Nested?
    init(child: Nested?) { self.child = child }
}

/// Holds a `Nested`, for values nested too deep.
struct Holder: Codable, Identifiable {
    var id: String
    var nested: Nested
}

/// A book under another name, without its co-authors: what `migrateAll` moves books to.
struct Volume: Codable, Identifiable {
    var id: Int
    var title: String
    var author: Author
}

/// A generic type: stored under its full name, `Generic<Int>`.
struct Generic<Value: Codable>: Codable, Identifiable {
    var id: String
    var value: Value
}

// MARK: - Bad input (Reliability/BadInputTests)

/// `Gauge` as it was before it got its `unit`.
struct GaugeV1: Codable, Identifiable {
    var id: Int
    var reading: Double
}

/// A gauge with a `unit`, which the rows parked as `GaugeV1` lack.
struct Gauge: Codable, Identifiable, Equatable, Sendable {
    var id: Int
    var reading: Double
    var unit: String
}

/// One parcel of a shipment; large labels fill a small disk.
struct Parcel: Codable, Identifiable, Sendable {
    var id: Int
    var label: String
}

// The golden files' `FixtureV1.Parcel` is stored as "Parcel": in one process, this one needs
// a name of its own.
extension Parcel: StoredTypeNamed {
    static let storedTypeName = "EdgeCases.Parcel"
}

/// Parcels referenced from one object: a graph large enough to fill a small disk.
struct Shipment: Codable, Identifiable, Sendable {
    var id: String
    var parcels: [Parcel]

    static func sample(id: String, parcels: Int) -> Shipment {
        Shipment(id: id, parcels: (0..<parcels).map { Parcel(id: $0, label: String(repeating: "\($0 % 10)", count: 2_000)) })
    }
}

/// A generic type, stored under one name per generic argument (`Crate<Int>`, `Crate<Author>`).
struct Crate<Content: Codable & Sendable>: Codable, Identifiable, Sendable {
    var id: String
    var content: Content
}

/// Text, bytes and numbers, for an object of ten megabytes.
struct Blob: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var text: String
    var bytes: Data
    var numbers: [Int]
}

/// Immutable, so `Sendable`: usable with the asynchronous API.
final class ChainLink: Codable, Identifiable, Sendable {
    let id: Int
    let next: ChainLink?

    init(id: Int, next: ChainLink?) {
        self.id = id
        self.next = next
    }
}

// MARK: - Code that calls the garage from its own Codable conformance

/// Calls the garage from its `init(from:)`, as user code might.
struct Reentrant: Codable, Identifiable {
    @TaskLocal static var garage: Garage?
    var id: String

    init(id: String) { self.id = id }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        _ = try Self.garage?.count(Counter.self)
    }
}

/// A link whose first one calls the garage from its `init(from:)`, as user code might. (Not
/// through a task-local value: those of the app don't follow decoding to a fresh stack.)
final class ReentrantLink: Codable, Identifiable, @unchecked Sendable {
    static let garage = Protected<Garage?>(nil)
    let id: Int
    let next: ReentrantLink?

    init(id: Int, next: ReentrantLink?) {
        self.id = id
        self.next = next
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        next = try container.decodeIfPresent(ReentrantLink.self, forKey: .next)
        if id == 0, let garage = Self.garage.read({ $0 }) {
            _ = try garage.count(Counter.self)
        }
    }
}

/// Parks something from its `encode(to:)`, as user code might.
struct WritesWhenEncoded: Codable, Identifiable {
    @TaskLocal static var garage: Garage?
    var id: Int

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if id == 1_500 {
            try Self.garage?.park(Counter(id: id, value: id))
        }
    }
}
