import Foundation
import GarageLite

// The types stored in the golden store files of format version 1 (Fixtures/v1), in the module
// GarageFixtureModels: the generator (garage-fixtures) wrote the files with them, and the tests
// (GarageLiteTests) read the files with them. Never change a stored type's name or shape: the
// v1 files were written with these, and must stay readable.
//
// The types are public, with their memberwise initialisers written out, for those two targets
// only: the module is no product of the package.
//
// A row's type name is `String(describing: T.self)`, the unqualified name, whatever the module:
// `FixtureV1.Ship` is stored as "Ship". The enum keeps these names apart from the tests' other
// types in Swift only: a test type of the same short name declares a name of its own
// (`StoredTypeNamed`), since two types of one process can't be stored under one name.

public enum FixtureV1 {
    // MARK: - plain.garage

    /// Every kind of plain value GarageLite stores inline.
    public struct Gadget: Codable, Identifiable {
        public var id: String
        public var name: String
        public var emptyText: String
        public var count: Int
        public var largest: Int64
        public var smallest: Int64
        public var unsignedMaximum: UInt64
        public var byte: UInt8
        public var price: Double
        public var sum: Double
        public var tiny: Double
        public var huge: Double
        public var ratio: Float
        public var isActive: Bool
        public var isBroken: Bool
        public var nickname: String?
        public var rating: Double?
        public var tags: [String]
        public var noTags: [String]
        public var scores: [String: Int]
        public var labels: [Int: String]
        public var readings: [String: [Double]]
        public var matrix: [[Int]]
        public var flags: Set<String>
        public var size: Size
        public var spareSizes: [Size]
        public var owner: Owner?
        public var kind: Kind
        public var shape: Shape
        public var madeAt: Date
        public var retiredAt: Date?
        public var firmware: Data
        public var homepage: URL
        public var manual: URL
        public var serial: UUID
        public var cost: Decimal
        public var discount: Decimal

        public init(
            id: String,
            name: String,
            emptyText: String,
            count: Int,
            largest: Int64,
            smallest: Int64,
            unsignedMaximum: UInt64,
            byte: UInt8,
            price: Double,
            sum: Double,
            tiny: Double,
            huge: Double,
            ratio: Float,
            isActive: Bool,
            isBroken: Bool,
            nickname: String? = nil,
            rating: Double? = nil,
            tags: [String],
            noTags: [String],
            scores: [String: Int],
            labels: [Int: String],
            readings: [String: [Double]],
            matrix: [[Int]],
            flags: Set<String>,
            size: Size,
            spareSizes: [Size],
            owner: Owner? = nil,
            kind: Kind,
            shape: Shape,
            madeAt: Date,
            retiredAt: Date? = nil,
            firmware: Data,
            homepage: URL,
            manual: URL,
            serial: UUID,
            cost: Decimal,
            discount: Decimal
        ) {
            self.id = id
            self.name = name
            self.emptyText = emptyText
            self.count = count
            self.largest = largest
            self.smallest = smallest
            self.unsignedMaximum = unsignedMaximum
            self.byte = byte
            self.price = price
            self.sum = sum
            self.tiny = tiny
            self.huge = huge
            self.ratio = ratio
            self.isActive = isActive
            self.isBroken = isBroken
            self.nickname = nickname
            self.rating = rating
            self.tags = tags
            self.noTags = noTags
            self.scores = scores
            self.labels = labels
            self.readings = readings
            self.matrix = matrix
            self.flags = flags
            self.size = size
            self.spareSizes = spareSizes
            self.owner = owner
            self.kind = kind
            self.shape = shape
            self.madeAt = madeAt
            self.retiredAt = retiredAt
            self.firmware = firmware
            self.homepage = homepage
            self.manual = manual
            self.serial = serial
            self.cost = cost
            self.discount = discount
        }
    }

    /// Not identifiable: stored inline in its parent.
    public struct Size: Codable, Hashable {
        public var width: Double
        public var height: Double
        public var unit: String?
        public var corners: [Corner]

        public init(width: Double, height: Double, unit: String? = nil, corners: [Corner]) {
            self.width = width
            self.height = height
            self.unit = unit
            self.corners = corners
        }
    }

    /// Nested two levels deep in a gadget.
    public struct Corner: Codable, Hashable {
        public var x: Int
        public var y: Int

        public init(x: Int, y: Int) {
            self.x = x
            self.y = y
        }
    }

    /// Stored inline in a gadget.
    public struct Owner: Codable, Hashable {
        public var name: String
        public var since: Date

        public init(name: String, since: Date) {
            self.name = name
            self.since = since
        }
    }

    /// A `String` enum.
    public enum Kind: String, Codable {
        case tool, toy, ornament
    }

    /// An enum with associated values (synthesized `Codable`).
    public enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case rectangle(width: Double, height: Double)
        case unknown
    }

    /// Identified by an `Int`.
    public struct Tally: Codable, Identifiable {
        public var id: Int
        public var value: Int

        public init(id: Int, value: Int) {
            self.id = id
            self.value = value
        }
    }

    /// Identified by a `UUID`.
    public struct Token: Codable, Identifiable {
        public var id: UUID
        public var label: String

        public init(id: UUID, label: String) {
            self.id = id
            self.label = label
        }
    }

    /// A class conforming to GarageStorage's `Mappable`, identified by a computed `id`.
    public final class Logbook: Mappable {
        public var id: String { title }
        public var title: String
        public var entries: [String]

        public init(title: String, entries: [String]) {
            self.title = title
            self.entries = entries
        }
    }

    // MARK: - graph.garage

    /// The root of the graph: fleet → ship → sailor → parrot.
    public struct Fleet: Codable, Identifiable {
        public var id: String
        public var flagship: Ship
        public var ships: [Ship]

        public init(id: String, flagship: Ship, ships: [Ship]) {
            self.id = id
            self.flagship = flagship
            self.ships = ships
        }
    }

    /// A reference of every kind: single, optional, in an array, a dictionary, an inline struct.
    public struct Ship: Codable, Identifiable {
        public var id: String
        public var captain: Sailor
        public var firstMate: Sailor?
        public var crew: [Sailor]
        public var homePort: Port
        public var watch: [String: Sailor]
        public var log: Log

        public init(
            id: String,
            captain: Sailor,
            firstMate: Sailor? = nil,
            crew: [Sailor],
            homePort: Port,
            watch: [String: Sailor],
            log: Log
        ) {
            self.id = id
            self.captain = captain
            self.firstMate = firstMate
            self.crew = crew
            self.homePort = homePort
            self.watch = watch
            self.log = log
        }
    }

    /// Not identifiable: stored inline in its ship, with a reference inside.
    public struct Log: Codable {
        public var pages: Int
        public var keeper: Sailor

        public init(pages: Int, keeper: Sailor) {
            self.pages = pages
            self.keeper = keeper
        }
    }

    /// A class, so that a test can tell two references to one row give one instance.
    public final class Sailor: Codable, Identifiable {
        public var id: String
        public var name: String
        public var rank: Int
        public var parrot: Parrot?

        public init(id: String, name: String, rank: Int, parrot: Parrot? = nil) {
            self.id = id
            self.name = name
            self.rank = rank
            self.parrot = parrot
        }
    }

    /// The end of the chain, identified by an `Int`.
    public struct Parrot: Codable, Identifiable {
        public var id: Int
        public var name: String
        public var words: [String]

        public init(id: Int, name: String, words: [String]) {
            self.id = id
            self.name = name
            self.words = words
        }
    }

    /// Shared by several ships; identified by a `UUID`.
    public struct Port: Codable, Identifiable {
        public var id: UUID
        public var name: String
        public var country: String

        public init(id: UUID, name: String, country: String) {
            self.id = id
            self.name = name
            self.country = country
        }
    }

    // MARK: - sync.garage

    /// Parked with each sync status; some reference a courier.
    public struct Parcel: Codable, Identifiable, Syncable {
        public var id: String
        public var contents: String
        public var weight: Double
        public var courier: Courier?
        public var syncStatus: SyncStatus

        public init(
            id: String,
            contents: String,
            weight: Double,
            courier: Courier? = nil,
            syncStatus: SyncStatus
        ) {
            self.id = id
            self.contents = contents
            self.weight = weight
            self.courier = courier
            self.syncStatus = syncStatus
        }
    }

    /// Referenced by parcels, with a status of its own.
    public struct Courier: Codable, Identifiable, Syncable {
        public var id: Int
        public var name: String
        public var syncStatus: SyncStatus

        public init(id: Int, name: String, syncStatus: SyncStatus) {
            self.id = id
            self.name = name
            self.syncStatus = syncStatus
        }
    }

    /// Claimed by a sync job when the file was written, and never completed.
    public struct Manifest: Codable, Identifiable, Syncable {
        public var id: String
        public var lines: Int
        public var syncStatus: SyncStatus

        public init(id: String, lines: Int, syncStatus: SyncStatus) {
            self.id = id
            self.lines = lines
            self.syncStatus = syncStatus
        }
    }

    /// Not `Syncable`: its rows stay `.undetermined`.
    public struct Receipt: Codable, Identifiable {
        public var id: String
        public var amount: Decimal

        public init(id: String, amount: Decimal) {
            self.id = id
            self.amount = amount
        }
    }

    // MARK: - hashable.garage

    /// `Hashable` but not `Identifiable`: identified by the SHA-256 of its content.
    public struct Tag: Codable, Hashable {
        public var label: String
        public var color: String?

        public init(label: String, color: String? = nil) {
            self.label = label
            self.color = color
        }
    }

    /// `Hashable` and `Syncable`: the status is not part of the content identifier.
    public struct Coordinate: Codable, Hashable, Syncable {
        public var latitude: Double
        public var longitude: Double
        public var syncStatus: SyncStatus

        public init(latitude: Double, longitude: Double, syncStatus: SyncStatus) {
            self.latitude = latitude
            self.longitude = longitude
            self.syncStatus = syncStatus
        }
    }

    /// `Hashable`, with a set (stored in canonical order) and a reference to an `Identifiable`.
    public struct Kit: Codable, Hashable {
        public var name: String
        public var tags: Set<Tag>
        public var maker: Maker

        public init(name: String, tags: Set<Tag>, maker: Maker) {
            self.name = name
            self.tags = tags
            self.maker = maker
        }
    }

    /// `Identifiable`, referenced from a hashable kit.
    public struct Maker: Codable, Hashable, Identifiable {
        public var id: String
        public var name: String

        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    // MARK: - encrypted.garage

    /// Encrypted, with a reference to its (also encrypted) agent.
    public struct Secret: Codable, Identifiable {
        public var id: String
        public var text: String
        public var pin: Int
        public var keeper: Agent

        public init(id: String, text: String, pin: Int, keeper: Agent) {
            self.id = id
            self.text = text
            self.pin = pin
            self.keeper = keeper
        }
    }

    /// Identified by a `UUID`; `Syncable`.
    public struct Agent: Codable, Identifiable, Syncable {
        public var id: UUID
        public var codename: String
        public var syncStatus: SyncStatus

        public init(id: UUID, codename: String, syncStatus: SyncStatus) {
            self.id = id
            self.codename = codename
            self.syncStatus = syncStatus
        }
    }

    /// The AES-256-GCM key of encrypted.garage. It must never change: the generator's
    /// `FixtureEncryptor` wrote the file with it, and the tests read it with `TestEncryptor`
    /// (the same scheme: the combined nonce, ciphertext and tag, in base64).
    public static let encryptionKey: [UInt8] = [
        0x47, 0x61, 0x72, 0x61, 0x67, 0x65, 0x4C, 0x69, 0x74, 0x65, 0x20, 0x66, 0x69, 0x78, 0x74, 0x75,
        0x72, 0x65, 0x20, 0x6B, 0x65, 0x79, 0x2C, 0x20, 0x76, 0x31, 0x2E, 0x20, 0x4E, 0x6F, 0x70, 0x65,
    ]
}

/// What format version 4 added to the cases: `locked.garage`, a store encrypted with a
/// passphrase (its key record in `garage_meta`). The objects are `FixtureV1`'s.
public enum FixtureV4 {
    /// The passphrase `locked.garage` opens with now. It must never change.
    public static let passphrase = "correct horse battery staple, v4"
    /// The passphrase it was first locked with, before its data key was rotated (`rekey(to:)`).
    public static let firstPassphrase = "GarageLite fixture, first passphrase"
    /// The PBKDF2 iterations it was locked with: the smallest taken, so that the tests open it
    /// quickly.
    public static let rounds = 210_000
}
