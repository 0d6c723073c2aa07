import Foundation
import GarageLite

// The types stored in the golden store files of format version 1 (Fixtures/v1).
//
// This file exists twice, byte for byte: Fixtures/generator/FixtureModels.swift (the generator
// writes the files with it) and Tests/GarageLiteTests/Support/FixtureModels.swift (the tests
// read them with it); FixtureTests checks that the two copies are identical. Never change a
// stored type's name or shape: the v1 files were written with these, and must stay readable.
//
// A row's type name is `String(describing: T.self)`, the unqualified name: `FixtureV1.Ship`
// is stored as "Ship". The enum only keeps these names apart from the tests' other types.

enum FixtureV1 {
    // MARK: - plain.garage

    /// Every kind of plain value GarageLite stores inline.
    struct Gadget: Codable, Identifiable {
        var id: String
        var name: String
        var emptyText: String
        var count: Int
        var largest: Int64
        var smallest: Int64
        var unsignedMaximum: UInt64
        var byte: UInt8
        var price: Double
        var sum: Double
        var tiny: Double
        var huge: Double
        var ratio: Float
        var isActive: Bool
        var isBroken: Bool
        var nickname: String?
        var rating: Double?
        var tags: [String]
        var noTags: [String]
        var scores: [String: Int]
        var labels: [Int: String]
        var readings: [String: [Double]]
        var matrix: [[Int]]
        var flags: Set<String>
        var size: Size
        var spareSizes: [Size]
        var owner: Owner?
        var kind: Kind
        var shape: Shape
        var madeAt: Date
        var retiredAt: Date?
        var firmware: Data
        var homepage: URL
        var manual: URL
        var serial: UUID
        var cost: Decimal
        var discount: Decimal
    }

    /// Not identifiable: stored inline in its parent.
    struct Size: Codable, Hashable {
        var width: Double
        var height: Double
        var unit: String?
        var corners: [Corner]
    }

    /// Nested two levels deep in a gadget.
    struct Corner: Codable, Hashable {
        var x: Int
        var y: Int
    }

    struct Owner: Codable, Hashable {
        var name: String
        var since: Date
    }

    enum Kind: String, Codable {
        case tool, toy, ornament
    }

    /// An enum with associated values (synthesized `Codable`).
    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case rectangle(width: Double, height: Double)
        case unknown
    }

    /// Identified by an `Int`.
    struct Tally: Codable, Identifiable {
        var id: Int
        var value: Int
    }

    /// Identified by a `UUID`.
    struct Token: Codable, Identifiable {
        var id: UUID
        var label: String
    }

    /// A class conforming to GarageStorage's `Mappable`, identified by a computed `id`.
    final class Logbook: Mappable {
        var id: String { title }
        var title: String
        var entries: [String]

        init(title: String, entries: [String]) {
            self.title = title
            self.entries = entries
        }
    }

    // MARK: - graph.garage

    /// The root of the graph: fleet → ship → sailor → parrot.
    struct Fleet: Codable, Identifiable {
        var id: String
        var flagship: Ship
        var ships: [Ship]
    }

    struct Ship: Codable, Identifiable {
        var id: String
        var captain: Sailor
        var firstMate: Sailor?
        var crew: [Sailor]
        var homePort: Port
        var watch: [String: Sailor]
        var log: Log
    }

    /// Not identifiable: stored inline in its ship, with a reference inside.
    struct Log: Codable {
        var pages: Int
        var keeper: Sailor
    }

    /// A class, so that a test can tell two references to one row give one instance.
    final class Sailor: Codable, Identifiable {
        var id: String
        var name: String
        var rank: Int
        var parrot: Parrot?

        init(id: String, name: String, rank: Int, parrot: Parrot? = nil) {
            self.id = id
            self.name = name
            self.rank = rank
            self.parrot = parrot
        }
    }

    struct Parrot: Codable, Identifiable {
        var id: Int
        var name: String
        var words: [String]
    }

    struct Port: Codable, Identifiable {
        var id: UUID
        var name: String
        var country: String
    }

    // MARK: - sync.garage

    struct Parcel: Codable, Identifiable, Syncable {
        var id: String
        var contents: String
        var weight: Double
        var courier: Courier?
        var syncStatus: SyncStatus
    }

    struct Courier: Codable, Identifiable, Syncable {
        var id: Int
        var name: String
        var syncStatus: SyncStatus
    }

    /// Claimed by a sync job when the file was written, and never completed.
    struct Manifest: Codable, Identifiable, Syncable {
        var id: String
        var lines: Int
        var syncStatus: SyncStatus
    }

    /// Not `Syncable`: its rows stay `.undetermined`.
    struct Receipt: Codable, Identifiable {
        var id: String
        var amount: Decimal
    }

    // MARK: - hashable.garage

    /// `Hashable` but not `Identifiable`: identified by the SHA-256 of its content.
    struct Tag: Codable, Hashable {
        var label: String
        var color: String?
    }

    /// `Hashable` and `Syncable`: the status is not part of the content identifier.
    struct Coordinate: Codable, Hashable, Syncable {
        var latitude: Double
        var longitude: Double
        var syncStatus: SyncStatus
    }

    /// `Hashable`, with a set (stored in canonical order) and a reference to an `Identifiable`.
    struct Kit: Codable, Hashable {
        var name: String
        var tags: Set<Tag>
        var maker: Maker
    }

    struct Maker: Codable, Hashable, Identifiable {
        var id: String
        var name: String
    }

    // MARK: - encrypted.garage

    struct Secret: Codable, Identifiable {
        var id: String
        var text: String
        var pin: Int
        var keeper: Agent
    }

    struct Agent: Codable, Identifiable, Syncable {
        var id: UUID
        var codename: String
        var syncStatus: SyncStatus
    }

    /// The AES-256-GCM key of encrypted.garage. It must never change: the generator's
    /// `FixtureEncryptor` wrote the file with it, and the tests read it with `TestEncryptor`
    /// (the same scheme: the combined nonce, ciphertext and tag, in base64).
    static let encryptionKey: [UInt8] = [
        0x47, 0x61, 0x72, 0x61, 0x67, 0x65, 0x4C, 0x69, 0x74, 0x65, 0x20, 0x66, 0x69, 0x78, 0x74, 0x75,
        0x72, 0x65, 0x20, 0x6B, 0x65, 0x79, 0x2C, 0x20, 0x76, 0x31, 0x2E, 0x20, 0x4E, 0x6F, 0x70, 0x65,
    ]
}
