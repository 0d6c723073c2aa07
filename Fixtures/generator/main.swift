// garage-fixtures: writes the golden store files of the current format version.
//
//     swift run garage-fixtures Fixtures          # writes Fixtures/v3/*.garage
//     swift run garage-fixtures --garagestorage Fixtures   # writes Fixtures/garagestorage/ (GarageStorageStores.swift)
//
// Each file is written through GarageLite's public API, with fixed values (fixed dates and
// identifiers), so that Tests/GarageLiteTests/Reliability/FixtureTests.swift can check every
// field of every object against constants of its own. Only the rows' own dates (creation,
// modification, claim) and the ciphertexts come from the moment the files were written.
//
// The files of a format version are written once and kept forever: this program refuses to
// write into a version folder that exists. See Fixtures/README.md.

import Foundation
import GarageFixtureModels
import GarageLite
import GRDB

/// The format version these files are written in; the program checks every file it wrote
/// records it. When GarageLite moves to a new version, the new files go to a new folder, made
/// by a new version of this program; the files of earlier versions stay as they are.
/// Version 2 added tombstones: `sync.garage` holds one. Version 3 added the index of
/// references (`garage_reference`), which every file with references holds. Version 4 added
/// the store's facts (`garage_meta`), which `locked.garage` uses for its key record. Version 5
/// added `isDeleted` to the sync index, which every file holds. Version 6 added the rows'
/// bases (the last synced content of an object with local changes): `bases.garage` holds them,
/// and `sync.garage`'s edited `.synced` parcel and tombstone have one.
let formatVersion = 6

struct GeneratorError: Error, CustomStringConvertible {
    var description: String
}

// MARK: - The cases

/// plain.garage: every kind of plain value, in objects identified by a String, an Int, a UUID
/// and a `Mappable` class's computed identifier.
func writePlain(_ garage: Garage) throws {
    let full = FixtureV1.Gadget(
        id: "g-full",
        name: "Grüße, 世界! 🚗👩‍👩‍👧 \"quoted\" \\ back\nnew line\ttab \u{1}",
        emptyText: "",
        count: 42,
        largest: .max,
        smallest: .min,
        unsignedMaximum: .max,
        byte: 255,
        price: 1234.5678,
        sum: 0.30000000000000004,
        tiny: .leastNonzeroMagnitude,
        huge: 1.7976931348623157e308,
        ratio: 0.1,
        isActive: true,
        isBroken: false,
        nickname: "Gizmo",
        rating: 4.5,
        tags: ["red", "", "ünïcödé", "🚀"],
        noTags: [],
        scores: ["one": 1, "zwei": 2, "三": 3, "": 0],
        labels: [1: "one", -2: "minus two", 30: "thirty"],
        readings: ["morning": [1.5, -2.25], "evening": []],
        matrix: [[1, 2, 3], [], [-4]],
        flags: ["beta", "alpha", "gamma"],
        size: FixtureV1.Size(
            width: 10.5, height: 20.25, unit: "cm",
            corners: [FixtureV1.Corner(x: 0, y: 0), FixtureV1.Corner(x: 10, y: -20)]),
        spareSizes: [FixtureV1.Size(width: 1, height: 2, unit: nil, corners: [])],
        owner: FixtureV1.Owner(name: "Ada", since: Date(timeIntervalSinceReferenceDate: -31_622_400)),
        kind: .toy,
        shape: .rectangle(width: 3, height: 4.5),
        madeAt: Date(timeIntervalSinceReferenceDate: 700_000_000.123_456),
        retiredAt: Date(timeIntervalSinceReferenceDate: -1_000_000_000.5),
        firmware: Data([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF]) + Data("GarageLite".utf8),
        homepage: URL(string: "https://example.com/gadgets/g-full?lang=fr&q=%C3%A9t%C3%A9#specs")!,
        manual: URL(fileURLWithPath: "/opt/manuals/gadget manual.pdf"),
        serial: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        cost: Decimal(string: "12345.678901234567890123")!,
        discount: Decimal(string: "-0.000001")!)
    let sparse = FixtureV1.Gadget(
        id: "g-sparse ✨",
        name: "Sparse",
        emptyText: "",
        count: 0,
        largest: 0,
        smallest: -1,
        unsignedMaximum: 0,
        byte: 0,
        price: -0.5,
        sum: 0,
        tiny: 0,
        huge: -1e100,
        ratio: -2.5,
        isActive: false,
        isBroken: true,
        nickname: nil,
        rating: nil,
        tags: [],
        noTags: [],
        scores: [:],
        labels: [:],
        readings: [:],
        matrix: [],
        flags: [],
        size: FixtureV1.Size(width: 0, height: 0, unit: nil, corners: []),
        spareSizes: [],
        owner: nil,
        kind: .ornament,
        shape: .unknown,
        madeAt: Date(timeIntervalSinceReferenceDate: 0),
        retiredAt: nil,
        firmware: Data(),
        homepage: URL(string: "http://localhost:8080/")!,
        manual: URL(string: "urn:isbn:0451450523")!,
        serial: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!,
        cost: 0,
        discount: Decimal(string: "0.0000000001")!)
    try garage.parkAll([full, sparse])
    try garage.parkAll([
        FixtureV1.Tally(id: 7, value: 49),
        FixtureV1.Tally(id: -3, value: -9),
        FixtureV1.Tally(id: 0, value: 0),
    ])
    try garage.park(FixtureV1.Token(id: UUID(uuidString: "9F1C2B3A-4D5E-4F60-8172-93A4B5C6D7E8")!, label: "first token"))
    try garage.park(FixtureV1.Token(id: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, label: ""))
    try garage.park(FixtureV1.Logbook(title: "Captain's log", entries: ["Day 1: calm", "Day 2: stormy ⛈"]))
}

/// graph.garage: a fleet of ships, their sailors and parrots, and a port two ships share;
/// a ship whose first mate's row was deleted; a sailor parked on its own.
func writeGraph(_ garage: Garage) throws {
    let polly = FixtureV1.Parrot(id: 1, name: "Polly", words: ["hello", "pieces of eight"])
    let kiwi = FixtureV1.Parrot(id: 2, name: "Kiwi", words: [])
    let anne = FixtureV1.Sailor(id: "s-anne", name: "Anne Bonny", rank: 1, parrot: polly)
    let jack = FixtureV1.Sailor(id: "s-jack", name: "Jack Rackham", rank: 2)
    let mary = FixtureV1.Sailor(id: "s-mary", name: "Mary Read", rank: 3, parrot: kiwi)
    let bart = FixtureV1.Sailor(id: "s-bart", name: "Bartholomew Roberts", rank: 1)
    let will = FixtureV1.Sailor(id: "s-will", name: "Will Turner", rank: 4)
    let nassau = FixtureV1.Port(
        id: UUID(uuidString: "6B1F8E2C-3A4D-4E5F-9A0B-1C2D3E4F5A6B")!, name: "Nassau", country: "Bahamas")
    let revenge = FixtureV1.Ship(
        id: "Revenge", captain: anne, firstMate: jack, crew: [mary, will], homePort: nassau,
        watch: ["night": mary, "day": will], log: FixtureV1.Log(pages: 120, keeper: jack))
    let fortune = FixtureV1.Ship(
        id: "Fortune", captain: bart, firstMate: nil, crew: [will], homePort: nassau,
        watch: [:], log: FixtureV1.Log(pages: 3, keeper: bart))
    try garage.park(FixtureV1.Fleet(id: "Black Flag", flagship: revenge, ships: [revenge, fortune]))

    let deserter = FixtureV1.Sailor(id: "s-deserter", name: "Deserter", rank: 9)
    let ghost = FixtureV1.Ship(
        id: "Ghost", captain: bart, firstMate: deserter, crew: [], homePort: nassau,
        watch: [:], log: FixtureV1.Log(pages: 0, keeper: bart))
    try garage.park(ghost)
    try garage.delete(deserter, rule: .rowOnly) // GarageStorage's delete: the reference dangles

    let flint = FixtureV1.Parrot(id: 3, name: "Captain Flint", words: ["pieces of eight"])
    try garage.park(FixtureV1.Sailor(id: "s-silver", name: "Long John Silver", rank: 5, parrot: flint))
}

/// sync.garage: every sync status, set by parking and by `setSyncStatus`; a referenced object
/// with a status of its own; an object edited after its first park (revision 2); a row a sync
/// job claimed and never completed; a type that is not `Syncable`.
func writeSync(_ garage: Garage) throws {
    let courier = FixtureV1.Courier(id: 7, name: "Swift Couriers", syncStatus: .synced)
    try garage.parkAll([
        FixtureV1.Parcel(id: "p-undetermined", contents: "Books", weight: 2.5, courier: nil, syncStatus: .undetermined),
        FixtureV1.Parcel(id: "p-notSynced", contents: "Tea", weight: 0.25, courier: courier, syncStatus: .notSynced),
        FixtureV1.Parcel(id: "p-syncing", contents: "Lamp", weight: 3.75, courier: nil, syncStatus: .syncing),
        FixtureV1.Parcel(id: "p-synced", contents: "Bicycle", weight: 12, courier: courier, syncStatus: .synced),
    ])
    let maps = FixtureV1.Parcel(id: "p-set", contents: "Maps", weight: 0.5, courier: nil, syncStatus: .notSynced)
    try garage.park(maps)
    try garage.setSyncStatus(.synced, for: maps)
    var chair = FixtureV1.Parcel(id: "p-edited", contents: "Chair", weight: 7, courier: nil, syncStatus: .synced)
    try garage.park(chair)
    chair.contents = "Chair, repainted"
    chair.syncStatus = .notSynced
    try garage.park(chair)

    try garage.park(FixtureV1.Manifest(id: "m-claimed", lines: 3, syncStatus: .notSynced))
    try garage.park(FixtureV1.Manifest(id: "m-waiting", lines: 5, syncStatus: .notSynced))
    let claim = try garage.claim(FixtureV1.Manifest.self, limit: 1)
    guard claim.identifiers == ["m-claimed"] else {
        throw GeneratorError(description: "sync.garage: claimed \(claim.identifiers), expected [\"m-claimed\"]")
    }

    try garage.park(FixtureV1.Receipt(id: "r-1", amount: Decimal(string: "19.99")!))

    // Format 2: a parcel that reached the server (.synced), then deleted: its tombstone waits
    // for a sync job to upload the deletion.
    let umbrella = FixtureV1.Parcel(id: "p-deleted", contents: "Umbrella", weight: 1, courier: nil, syncStatus: .synced)
    try garage.park(umbrella)
    try garage.delete(umbrella)
}

/// hashable.garage: objects identified by the SHA-256 of their content.
func writeHashable(_ garage: Garage) throws {
    let urgent = FixtureV1.Tag(label: "urgent", color: "red")
    let later = FixtureV1.Tag(label: "later", color: nil)
    let unicode = FixtureV1.Tag(label: "ünïcödé 🏷", color: "#00FF00")
    try garage.parkAll([urgent, later, unicode])
    try garage.park(urgent) // the same content: the same row
    try garage.parkAll([
        FixtureV1.Coordinate(latitude: 48.8566, longitude: 2.3522, syncStatus: .notSynced),
        FixtureV1.Coordinate(latitude: -33.8688, longitude: 151.2093, syncStatus: .synced),
    ])
    let acme = FixtureV1.Maker(id: "m-acme", name: "ACME")
    try garage.parkAll([
        FixtureV1.Kit(name: "Starter", tags: [urgent, later], maker: acme),
        FixtureV1.Kit(name: "Empty", tags: [], maker: acme),
    ])
}

/// encrypted.garage: rows encrypted with `FixtureEncryptor`, and rows parked before the
/// delegate was set, in plaintext.
func writeEncrypted(_ garage: Garage) throws {
    let openBook = FixtureV1.Agent(
        id: UUID(uuidString: "0B7E0B7E-0000-4000-8000-000000000002")!, codename: "Open Book", syncStatus: .undetermined)
    try garage.park(FixtureV1.Secret(id: "s-plain", text: "Not a secret", pin: 0, keeper: openBook))
    garage.dataEncryptionDelegate = FixtureEncryptor()
    let nightjar = FixtureV1.Agent(
        id: UUID(uuidString: "A6E3D1C0-5B4A-4938-8271-605F4E3D2C1B")!, codename: "Nightjar", syncStatus: .notSynced)
    try garage.parkAll([
        FixtureV1.Secret(id: "s-1", text: "The treasure is under the old oak 🌳", pin: 1234, keeper: nightjar),
        FixtureV1.Secret(id: "s-2", text: "Ünïcödé sécret", pin: 987_654, keeper: nightjar),
    ])
}

/// empty.garage: a store that was created and never given an object.
func writeEmpty(_ garage: Garage) throws {}

/// locked.garage (version 4): a store locked with `FixtureV4.firstPassphrase`, whose data key
/// was then rotated and the store locked with `FixtureV4.passphrase` (`rekey(to:)`): its record
/// holds data key 2 only. Secrets parked before and after the rotation (one deleted before it),
/// and a `Hashable` tag, whose identifier is keyed (an HMAC with the store's identity key).
func writeLocked(_ garage: Garage) throws {
    let nightjar = FixtureV1.Agent(
        id: UUID(uuidString: "A6E3D1C0-5B4A-4938-8271-605F4E3D2C1B")!, codename: "Nightjar", syncStatus: .notSynced)
    try garage.parkAll([
        FixtureV1.Secret(id: "s-1", text: "The treasure is under the old oak 🌳", pin: 1234, keeper: nightjar),
        FixtureV1.Secret(id: "s-gone", text: "Deleted after it synced", pin: 1, keeper: nightjar),
    ])
    try garage.delete(FixtureV1.Secret.self, identifier: "s-gone")
    try garage.rekey(to: .passphrase(FixtureV4.passphrase, rounds: FixtureV4.rounds))
    try garage.park(FixtureV1.Secret(id: "s-2", text: "Ünïcödé sécret", pin: 987_654, keeper: nightjar))
    try garage.park(FixtureV1.Tag(label: "urgent", color: "red"))
}

/// bases.garage (version 6): the base of each kind of local change. `p-edited`: downloaded,
/// then edited (its base is the downloaded version). `p-during`: edited during its upload, which
/// completed (its base is the version uploaded). `p-deleted`: downloaded, then deleted (its
/// tombstone's base). `p-synced`: downloaded, no change (no base). `s-edited`: an encrypted
/// secret downloaded, then edited (its base is encrypted too). Before them, a sync engine
/// uploads `p-uploaded` (its server version: "v1") and downloads `p-downloaded` ("s7").
func writeBases(_ garage: Garage) throws {
    try garage.park(FixtureV1.Parcel(id: "p-uploaded", contents: "Lamp", weight: 2, courier: nil, syncStatus: .notSynced))
    let engine = SyncEngine(garage: garage, transport: FixtureTransport(), types: [.of(FixtureV1.Parcel.self)])
    let failure = Protected<(any Error)?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { try await engine.sync() } catch { failure.write { $0 = error } }
        done.signal()
    }
    done.wait()
    if let error = failure.read({ $0 }) { throw error }

    try garage.park(FixtureV1.Parcel(id: "p-during", contents: "Clock", weight: 3, courier: nil, syncStatus: .notSynced))
    let claim = try garage.claim(FixtureV1.Parcel.self, limit: 10)
    guard claim.identifiers == ["p-during"] else {
        throw GeneratorError(description: "bases.garage: claimed \(claim.identifiers), expected p-during")
    }
    try garage.park(FixtureV1.Parcel(id: "p-during", contents: "Clock, wound", weight: 3, courier: nil, syncStatus: .notSynced))
    try garage.complete(claim)
    try garage.parkDownloaded([
        FixtureV1.Parcel(id: "p-edited", contents: "Kettle", weight: 1.5, courier: nil, syncStatus: .synced),
        FixtureV1.Parcel(id: "p-deleted", contents: "Vase", weight: 2, courier: nil, syncStatus: .synced),
        FixtureV1.Parcel(id: "p-synced", contents: "Rug", weight: 4, courier: nil, syncStatus: .synced),
    ])
    try garage.park(FixtureV1.Parcel(id: "p-edited", contents: "Kettle, descaled", weight: 1.5, courier: nil, syncStatus: .synced))
    try garage.delete(FixtureV1.Parcel.self, identifier: "p-deleted")
    garage.dataEncryptionDelegate = FixtureEncryptor()
    let nightjar = FixtureV1.Agent(
        id: UUID(uuidString: "A6E3D1C0-5B4A-4938-8271-605F4E3D2C1B")!, codename: "Nightjar", syncStatus: .synced)
    try garage.parkDownloaded([FixtureV1.Secret(id: "s-edited", text: "First draft", pin: 1, keeper: nightjar)])
    try garage.park(FixtureV1.Secret(id: "s-edited", text: "Second draft", pin: 2, keeper: nightjar))
}

/// The server of bases.garage's sync engine: accepts every upload as version "v1", and has
/// one parcel to download, as version "s7".
struct FixtureTransport: SyncTransport {
    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        UploadResults(Dictionary(uniqueKeysWithValues: batch.changes.map { ($0.identifier, .accepted(version: "v1")) }))
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        guard request.cursor == nil else { return DownloadBatch(changes: [], cursor: "1") }
        let parcel = FixtureV1.Parcel(id: "p-downloaded", contents: "Map", weight: 0.5, courier: nil, syncStatus: .synced)
        return DownloadBatch(changes: [SyncChange(identifier: parcel.id, object: parcel as? Object, version: "s7")], cursor: "1")
    }
}

let cases: [(name: String, key: StoreKey?, write: (Garage) throws -> Void)] = [
    ("plain", nil, writePlain),
    ("graph", nil, writeGraph),
    ("sync", nil, writeSync),
    ("hashable", nil, writeHashable),
    ("encrypted", nil, writeEncrypted),
    ("empty", nil, writeEmpty),
    ("locked", .passphrase(FixtureV4.firstPassphrase, rounds: FixtureV4.rounds), writeLocked),
    ("bases", nil, writeBases),
]

// MARK: - Writing the files

/// Writes one case, then leaves the file as one self-contained file: GarageLite's WAL is
/// checkpointed into it and removed. The file stays as GarageLite made it (in WAL mode, with
/// its application_id, user_version and schema).
func writeFile(at path: String, key: StoreKey?, _ write: (Garage) throws -> Void) throws {
    do {
        let garage = try Garage(path: path, encryptionKey: key)
        try write(garage)
    } // the garage is released here: its connections close
    let queue = try DatabaseQueue(path: path)
    let (userVersion, applicationID, journalMode, rowCount) = try queue.writeWithoutTransaction { db in
        try db.checkpoint(.truncate)
        return (try Int.fetchOne(db, sql: "PRAGMA user_version") ?? -1,
                try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0,
                try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM garage_object") ?? -1)
    }
    try queue.close()
    guard userVersion == formatVersion else {
        throw GeneratorError(description: """
            \(path) has format version \(userVersion), not \(formatVersion): GarageLite writes a new \
            format. Add a generator for it writing into a new folder; never rewrite the v\(formatVersion) files.
            """)
    }
    guard applicationID == 0x4761_724C, journalMode == "wal" else {
        throw GeneratorError(description: "\(path): application_id \(applicationID), journal mode \(journalMode)")
    }
    for suffix in ["-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: path + suffix) {
        throw GeneratorError(description: "\(path + suffix) remains after closing the store")
    }
    let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
    print("wrote \((path as NSString).lastPathComponent): \(rowCount) rows, \(size) bytes")
}

@MainActor func run() throws {
    var arguments = CommandLine.arguments.dropFirst()
    if arguments.first == "--garagestorage" {
        arguments.removeFirst()
        guard arguments.count == 1, let folder = arguments.first else {
            throw GeneratorError(description: "usage: garage-fixtures --garagestorage <fixtures folder>")
        }
        let destination = URL(fileURLWithPath: folder).appendingPathComponent("garagestorage")
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw GeneratorError(description: "\(destination.path) exists: golden files are never regenerated.")
        }
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        try writeGarageStorageStore(into: destination)
        return
    }
    guard arguments.count == 1, let folder = arguments.first, !folder.hasPrefix("-") else {
        throw GeneratorError(description: """
            usage: garage-fixtures <fixtures folder>
            Writes the golden store files of format version \(formatVersion) into <fixtures folder>/v\(formatVersion).
            """)
    }
    let fileManager = FileManager.default
    let destination = URL(fileURLWithPath: folder).appendingPathComponent("v\(formatVersion)")
    guard !fileManager.fileExists(atPath: destination.path) else {
        throw GeneratorError(description: """
            \(destination.path) exists. The files of a format version are never regenerated: the \
            tests prove that today's GarageLite reads the files an earlier one wrote. To look at \
            freshly written files, pass another folder.
            """)
    }
    // Written next to the destination, then renamed: a failure leaves no half-written version folder.
    let scratch = destination.deletingLastPathComponent()
        .appendingPathComponent(".v\(formatVersion)-writing-\(UUID().uuidString)")
    try fileManager.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? fileManager.removeItem(at: scratch) }
    for fixture in cases {
        try writeFile(at: scratch.appendingPathComponent("\(fixture.name).garage").path, key: fixture.key, fixture.write)
    }
    try fileManager.moveItem(at: scratch, to: destination)
    print("fixtures of format version \(formatVersion) are in \(destination.path)")
}

do {
    try run()
} catch {
    FileHandle.standardError.write(Data("garage-fixtures: \(error)\n".utf8))
    exit(1)
}
