import Crypto
import Foundation
import GarageFixtureModels
import Testing
@testable import GarageLite
import GarageLiteSQLite

/// Today's GarageLite reads the stores that GarageLite wrote in format version 1.
///
/// Each test opens a copy of a file of `Fixtures/v1` and checks every object, field by field,
/// against the values below, written by hand: the generator (`Fixtures/generator`) is not
/// run again. The files are never regenerated (see `Fixtures/README.md`).
@Suite("Golden store files of format version 1", .firstPassOnly)
struct FixtureTests {
    typealias V1 = FixtureV1

    // MARK: - The files themselves

    @Test func theV1FolderHoldsTheFilesTestedHere() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: FixtureFile.folder(version: 1).path)
        #expect(names.sorted() == [
            "empty.garage", "encrypted.garage", "graph.garage", "hashable.garage", "plain.garage", "sync.garage",
        ])
    }

    /// The generator and these tests share one module of models, `GarageFixtureModels`
    /// (`Fixtures/models`): as the garage names them, its types are the ones the files hold.
    @Test func theSharedModelsHaveTheTypeNamesTheFilesHold() throws {
        let models = try [
            Identity.typeName(V1.Gadget.self), Identity.typeName(V1.Tally.self),
            Identity.typeName(V1.Token.self), Identity.typeName(V1.Logbook.self),
            Identity.typeName(V1.Fleet.self), Identity.typeName(V1.Ship.self),
            Identity.typeName(V1.Sailor.self), Identity.typeName(V1.Parrot.self),
            Identity.typeName(V1.Port.self), Identity.typeName(V1.Parcel.self),
            Identity.typeName(V1.Courier.self), Identity.typeName(V1.Manifest.self),
            Identity.typeName(V1.Receipt.self), Identity.typeName(V1.Tag.self),
            Identity.typeName(V1.Coordinate.self), Identity.typeName(V1.Kit.self),
            Identity.typeName(V1.Maker.self), Identity.typeName(V1.Secret.self),
            Identity.typeName(V1.Agent.self),
        ]
        var stored: [String] = []
        for name in ["plain", "graph", "sync", "hashable", "encrypted", "empty"] {
            let fixture = try FixtureFile("\(name).garage")
            let file = try SQLiteFile(fixture.path)
            stored += try file.strings("SELECT DISTINCT type FROM garage_object")
            try file.close()
            fixture.expectOriginalUnchanged()
        }
        #expect(models.sorted() == stored.sorted())
        #expect(models.contains("Ship"))   // the unqualified name, not FixtureV1.Ship
    }

    @Test(arguments: ["plain", "graph", "sync", "hashable", "encrypted", "empty"])
    func eachFileIsAWholeVersion1Store(name: String) throws {
        let fixture = try FixtureFile("\(name).garage")
        let file = try SQLiteFile(fixture.path)
        let (userVersion, applicationID, journalMode, integrity, schema) = (
            try file.int("PRAGMA user_version"),
            try file.int("PRAGMA application_id").map(Int32.init),
            try file.string("PRAGMA journal_mode"),
            try file.integrityCheck(),
            try file.strings("SELECT type || ' ' || name FROM sqlite_master ORDER BY name"))
        try file.close()
        #expect(userVersion == 1)
        #expect(applicationID == Schema.applicationID)
        #expect(journalMode == "wal")
        #expect(integrity == ["ok"])
        #expect(schema == [
            "table garage_object", "index garage_object_claim", "index garage_object_sync",
            "index sqlite_autoindex_garage_object_1",
        ])
        fixture.expectOriginalUnchanged()
    }

    // MARK: - plain.garage

    @Test func plainValues() throws {
        let fixture = try FixtureFile("plain.garage")
        let garage = try Garage(path: fixture.path)

        #expect(try garage.count(V1.Gadget.self) == 2)
        #expect(try garage.count(V1.Tally.self) == 3)
        #expect(try garage.count(V1.Token.self) == 2)
        #expect(try garage.count(V1.Logbook.self) == 1)
        #expect(try garage.identifiers(of: V1.Gadget.self).sorted() == ["g-full", "g-sparse ✨"])

        let full = try #require(try garage.retrieve(V1.Gadget.self, identifier: "g-full"))
        #expect(full.id == "g-full")
        #expect(full.name == "Grüße, 世界! 🚗👩‍👩‍👧 \"quoted\" \\ back\nnew line\ttab \u{1}")
        #expect(full.emptyText == "")
        #expect(full.count == 42)
        #expect(full.largest == 9_223_372_036_854_775_807)
        #expect(full.smallest == -9_223_372_036_854_775_808)
        #expect(full.unsignedMaximum == 18_446_744_073_709_551_615)
        #expect(full.byte == 255)
        #expect(full.price == 1234.5678)
        #expect(full.sum == 0.30000000000000004)
        #expect(full.tiny == .leastNonzeroMagnitude)
        #expect(full.tiny.bitPattern == 1)
        #expect(full.huge == 1.7976931348623157e308)
        #expect(full.ratio == 0.1 as Float)
        #expect(full.isActive == true)
        #expect(full.isBroken == false)
        #expect(full.nickname == "Gizmo")
        #expect(full.rating == 4.5)
        #expect(full.tags == ["red", "", "ünïcödé", "🚀"])
        #expect(full.noTags == [])
        #expect(full.scores == ["one": 1, "zwei": 2, "三": 3, "": 0])
        #expect(full.labels == [1: "one", -2: "minus two", 30: "thirty"])
        #expect(full.readings == ["morning": [1.5, -2.25], "evening": []])
        #expect(full.matrix == [[1, 2, 3], [], [-4]])
        #expect(full.flags == ["alpha", "beta", "gamma"])
        #expect(full.size.width == 10.5)
        #expect(full.size.height == 20.25)
        #expect(full.size.unit == "cm")
        #expect(full.size.corners == [V1.Corner(x: 0, y: 0), V1.Corner(x: 10, y: -20)])
        #expect(full.spareSizes == [V1.Size(width: 1, height: 2, unit: nil, corners: [])])
        #expect(full.owner?.name == "Ada")
        #expect(full.owner?.since == Date(timeIntervalSinceReferenceDate: -31_622_400))
        #expect(full.kind == .toy)
        #expect(full.shape == .rectangle(width: 3, height: 4.5))
        #expect(full.madeAt == Date(timeIntervalSinceReferenceDate: 700_000_000.123_456))
        #expect(full.retiredAt == Date(timeIntervalSinceReferenceDate: -1_000_000_000.5))
        #expect(full.firmware == Data([0x00, 0x01, 0x7F, 0x80, 0xFE, 0xFF,
                                       0x47, 0x61, 0x72, 0x61, 0x67, 0x65, 0x4C, 0x69, 0x74, 0x65]))
        #expect(full.homepage.absoluteString == "https://example.com/gadgets/g-full?lang=fr&q=%C3%A9t%C3%A9#specs")
        #expect(full.homepage.fragment == "specs")
        #expect(full.manual.absoluteString == "file:///opt/manuals/gadget%20manual.pdf")
        #expect(full.manual.isFileURL)
        #expect(full.manual.path == "/opt/manuals/gadget manual.pdf")
        #expect(full.serial.uuidString == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(full.cost.description == "12345.678901234567890123")
        #expect(full.cost == Decimal(string: "12345.678901234567890123"))
        #expect(full.discount == Decimal(string: "-0.000001"))

        let sparse = try #require(try garage.retrieve(V1.Gadget.self, identifier: "g-sparse ✨"))
        #expect(sparse.id == "g-sparse ✨")
        #expect(sparse.name == "Sparse")
        #expect(sparse.emptyText == "")
        #expect(sparse.count == 0)
        #expect(sparse.largest == 0)
        #expect(sparse.smallest == -1)
        #expect(sparse.unsignedMaximum == 0)
        #expect(sparse.byte == 0)
        #expect(sparse.price == -0.5)
        #expect(sparse.sum == 0)
        #expect(sparse.tiny == 0)
        #expect(sparse.huge == -1e100)
        #expect(sparse.ratio == -2.5)
        #expect(sparse.isActive == false)
        #expect(sparse.isBroken == true)
        #expect(sparse.nickname == nil)
        #expect(sparse.rating == nil)
        #expect(sparse.tags == [])
        #expect(sparse.noTags == [])
        #expect(sparse.scores == [:])
        #expect(sparse.labels == [:])
        #expect(sparse.readings == [:])
        #expect(sparse.matrix == [])
        #expect(sparse.flags == [])
        #expect(sparse.size == V1.Size(width: 0, height: 0, unit: nil, corners: []))
        #expect(sparse.spareSizes == [])
        #expect(sparse.owner == nil)
        #expect(sparse.kind == .ornament)
        #expect(sparse.shape == .unknown)
        #expect(sparse.madeAt == Date(timeIntervalSinceReferenceDate: 0))
        #expect(sparse.retiredAt == nil)
        #expect(sparse.firmware == Data())
        #expect(sparse.homepage.absoluteString == "http://localhost:8080/")
        #expect(sparse.manual.absoluteString == "urn:isbn:0451450523")
        #expect(sparse.serial.uuidString == "00000000-0000-0000-0000-000000000000")
        #expect(sparse.cost == 0)
        #expect(sparse.discount == Decimal(string: "0.0000000001"))

        let tallies = try garage.retrieveAll(V1.Tally.self).sorted { $0.id < $1.id }
        #expect(tallies.map(\.id) == [-3, 0, 7])
        #expect(tallies.map(\.value) == [-9, 0, 49])
        #expect(try garage.retrieve(V1.Tally.self, identifier: -3)?.value == -9)
        #expect(try garage.identifiers(of: V1.Tally.self).sorted() == ["-3", "0", "7"])

        let firstID = try #require(UUID(uuidString: "9F1C2B3A-4D5E-4F60-8172-93A4B5C6D7E8"))
        let first = try #require(try garage.retrieve(V1.Token.self, identifier: firstID))
        #expect(first.id == firstID)
        #expect(first.label == "first token")
        let secondID = try #require(UUID(uuidString: "00000000-0000-0000-0000-000000000001"))
        #expect(try garage.retrieve(V1.Token.self, identifier: secondID)?.label == "")

        let logbook = try #require(try garage.retrieve(V1.Logbook.self, identifier: "Captain's log"))
        #expect(logbook.title == "Captain's log")
        #expect(logbook.entries == ["Day 1: calm", "Day 2: stormy ⛈"])

        for identifier in ["g-full", "g-sparse ✨"] {
            try expectRow(garage, V1.Gadget.self, identifier)
        }
        try expectRow(garage, V1.Tally.self, 7)
        try expectRow(garage, V1.Token.self, firstID)
        try expectRow(garage, V1.Logbook.self, "Captain's log")
        fixture.expectOriginalUnchanged()
    }

    // MARK: - graph.garage

    @Test func aGraphWithReferences() throws {
        let fixture = try FixtureFile("graph.garage")
        let garage = try Garage(path: fixture.path)

        #expect(try garage.count(V1.Fleet.self) == 1)
        #expect(try garage.count(V1.Ship.self) == 3)
        #expect(try garage.count(V1.Sailor.self) == 6)
        #expect(try garage.count(V1.Parrot.self) == 3)
        #expect(try garage.count(V1.Port.self) == 1)

        let fleet = try #require(try garage.retrieve(V1.Fleet.self, identifier: "Black Flag"))
        #expect(fleet.id == "Black Flag")
        #expect(fleet.ships.map(\.id) == ["Revenge", "Fortune"])
        try expectRevenge(fleet.flagship)
        try expectRevenge(fleet.ships[0])
        try expectFortune(fleet.ships[1])

        // One retrieve decodes each row once: every reference to a row is the same instance.
        let revenge = fleet.flagship, fortune = fleet.ships[1]
        #expect(revenge.captain === fleet.ships[0].captain)
        #expect(revenge.crew[1] === fortune.crew[0]) // Will, in both crews
        #expect(revenge.watch["night"] === revenge.crew[0])
        #expect(revenge.watch["day"] === revenge.crew[1])
        #expect(revenge.log.keeper === revenge.firstMate)
        #expect(fortune.log.keeper === fortune.captain)

        // A referenced object is retrieved on its own, too.
        try expectFortune(try #require(try garage.retrieve(V1.Ship.self, identifier: "Fortune")))
        try expectSailor(try #require(try garage.retrieve(V1.Sailor.self, identifier: "s-mary")),
                         "s-mary", "Mary Read", rank: 3, parrot: (2, "Kiwi", []))

        // The first mate's row was deleted: the optional reference decodes as nil.
        #expect(try garage.retrieve(V1.Sailor.self, identifier: "s-deserter") == nil)
        let ghost = try #require(try garage.retrieve(V1.Ship.self, identifier: "Ghost"))
        #expect(ghost.id == "Ghost")
        try expectSailor(ghost.captain, "s-bart", "Bartholomew Roberts", rank: 1, parrot: nil)
        #expect(ghost.firstMate == nil)
        #expect(ghost.crew.isEmpty)
        try expectNassau(ghost.homePort)
        #expect(ghost.watch.isEmpty)
        #expect(ghost.log.pages == 0)
        #expect(ghost.log.keeper === ghost.captain)

        let silver = try #require(try garage.retrieve(V1.Sailor.self, identifier: "s-silver"))
        try expectSailor(silver, "s-silver", "Long John Silver", rank: 5, parrot: (3, "Captain Flint", ["pieces of eight"]))

        // Parked directly, or only as a reference.
        try expectRow(garage, V1.Fleet.self, "Black Flag", isRoot: true)
        try expectRow(garage, V1.Ship.self, "Revenge", isRoot: false)
        try expectRow(garage, V1.Ship.self, "Fortune", isRoot: false)
        try expectRow(garage, V1.Ship.self, "Ghost", isRoot: true)
        for sailor in ["s-anne", "s-jack", "s-mary", "s-bart", "s-will"] {
            try expectRow(garage, V1.Sailor.self, sailor, isRoot: false)
        }
        try expectRow(garage, V1.Sailor.self, "s-silver", isRoot: true)
        for parrot in [1, 2, 3] {
            try expectRow(garage, V1.Parrot.self, parrot, isRoot: false)
        }
        try expectRow(garage, V1.Port.self, Self.nassauID, isRoot: false)

        // The outgoing references, readable with SQLite's json_each without the Swift types.
        let references = try SQLiteFile(fixture.path).strings("""
            SELECT json_extract(value, '$[0]') || '(' || json_extract(value, '$[1]') || ')'
            FROM garage_object, json_each(garage_object.refs)
            WHERE garage_object.type = 'Ship' AND garage_object.identifier = 'Revenge'
            """)
        #expect(Set(references) == [
            "Sailor(s-anne)", "Sailor(s-jack)", "Sailor(s-mary)", "Sailor(s-will)", "Port(\(Self.nassauID.uuidString))",
        ])
        #expect(references.count == 5)
        fixture.expectOriginalUnchanged()
    }

    static let nassauID = UUID(uuidString: "6B1F8E2C-3A4D-4E5F-9A0B-1C2D3E4F5A6B")!

    private func expectRevenge(_ ship: V1.Ship, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(ship.id == "Revenge", sourceLocation: sourceLocation)
        try expectSailor(ship.captain, "s-anne", "Anne Bonny", rank: 1,
                         parrot: (1, "Polly", ["hello", "pieces of eight"]), sourceLocation: sourceLocation)
        try expectSailor(try #require(ship.firstMate, sourceLocation: sourceLocation),
                         "s-jack", "Jack Rackham", rank: 2, parrot: nil, sourceLocation: sourceLocation)
        #expect(ship.crew.map(\.id) == ["s-mary", "s-will"], sourceLocation: sourceLocation)
        try expectSailor(ship.crew[0], "s-mary", "Mary Read", rank: 3, parrot: (2, "Kiwi", []), sourceLocation: sourceLocation)
        try expectSailor(ship.crew[1], "s-will", "Will Turner", rank: 4, parrot: nil, sourceLocation: sourceLocation)
        try expectNassau(ship.homePort, sourceLocation: sourceLocation)
        #expect(ship.watch.mapValues(\.id) == ["night": "s-mary", "day": "s-will"], sourceLocation: sourceLocation)
        #expect(ship.log.pages == 120, sourceLocation: sourceLocation)
        #expect(ship.log.keeper.id == "s-jack", sourceLocation: sourceLocation)
    }

    private func expectFortune(_ ship: V1.Ship, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(ship.id == "Fortune", sourceLocation: sourceLocation)
        try expectSailor(ship.captain, "s-bart", "Bartholomew Roberts", rank: 1, parrot: nil, sourceLocation: sourceLocation)
        #expect(ship.firstMate == nil, sourceLocation: sourceLocation)
        #expect(ship.crew.map(\.id) == ["s-will"], sourceLocation: sourceLocation)
        try expectSailor(ship.crew[0], "s-will", "Will Turner", rank: 4, parrot: nil, sourceLocation: sourceLocation)
        try expectNassau(ship.homePort, sourceLocation: sourceLocation)
        #expect(ship.watch.isEmpty, sourceLocation: sourceLocation)
        #expect(ship.log.pages == 3, sourceLocation: sourceLocation)
        #expect(ship.log.keeper.id == "s-bart", sourceLocation: sourceLocation)
    }

    private func expectSailor(
        _ sailor: V1.Sailor, _ id: String, _ name: String, rank: Int, parrot: (id: Int, name: String, words: [String])?,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(sailor.id == id, sourceLocation: sourceLocation)
        #expect(sailor.name == name, sourceLocation: sourceLocation)
        #expect(sailor.rank == rank, sourceLocation: sourceLocation)
        if let parrot {
            let stored = try #require(sailor.parrot, "\(id) has no parrot", sourceLocation: sourceLocation)
            #expect(stored.id == parrot.id, sourceLocation: sourceLocation)
            #expect(stored.name == parrot.name, sourceLocation: sourceLocation)
            #expect(stored.words == parrot.words, sourceLocation: sourceLocation)
        } else {
            #expect(sailor.parrot == nil, sourceLocation: sourceLocation)
        }
    }

    private func expectNassau(_ port: V1.Port, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(port.id == Self.nassauID, sourceLocation: sourceLocation)
        #expect(port.name == "Nassau", sourceLocation: sourceLocation)
        #expect(port.country == "Bahamas", sourceLocation: sourceLocation)
    }

    // MARK: - sync.garage

    @Test func everySyncStatus() throws {
        let fixture = try FixtureFile("sync.garage")
        let garage = try Garage(path: fixture.path)

        #expect(try garage.count(V1.Parcel.self) == 6)
        #expect(try garage.count(V1.Courier.self) == 1)
        #expect(try garage.count(V1.Manifest.self) == 2)
        #expect(try garage.count(V1.Receipt.self) == 1)
        #expect(try garage.syncStatusCounts() == [
            "Parcel": [.undetermined: 1, .notSynced: 2, .syncing: 1, .synced: 2],
            "Courier": [.synced: 1],
            "Manifest": [.notSynced: 1, .syncing: 1],
            "Receipt": [.undetermined: 1],
        ])
        let expectedParcels: [SyncStatus: [String]] = [
            .undetermined: ["p-undetermined"],
            .notSynced: ["p-edited", "p-notSynced"],
            .syncing: ["p-syncing"],
            .synced: ["p-set", "p-synced"],
        ]
        for status in SyncStatus.allCases {
            let parcels = try garage.retrieveAll(V1.Parcel.self, withStatus: status)
            #expect(parcels.map(\.id).sorted() == expectedParcels[status], "\(status)")
            #expect(parcels.allSatisfy { $0.syncStatus == status }, "\(status)")
            #expect(try garage.count(V1.Parcel.self, withStatus: status) == expectedParcels[status]?.count)
            #expect(try garage.identifiers(of: V1.Parcel.self, withStatus: status).sorted() == expectedParcels[status])
        }

        let expected: [(id: String, contents: String, weight: Double, hasCourier: Bool, status: SyncStatus, revision: Int64)] = [
            ("p-undetermined", "Books", 2.5, false, .undetermined, 1),
            ("p-notSynced", "Tea", 0.25, true, .notSynced, 1),
            ("p-syncing", "Lamp", 3.75, false, .syncing, 1),
            ("p-synced", "Bicycle", 12, true, .synced, 1),
            ("p-set", "Maps", 0.5, false, .synced, 1),
            ("p-edited", "Chair, repainted", 7, false, .notSynced, 2),
        ]
        for parcel in expected {
            let stored = try #require(try garage.retrieve(V1.Parcel.self, identifier: parcel.id))
            #expect(stored.id == parcel.id)
            #expect(stored.contents == parcel.contents)
            #expect(stored.weight == parcel.weight)
            #expect(stored.syncStatus == parcel.status)
            #expect(try garage.syncStatus(for: stored) == parcel.status)
            if parcel.hasCourier {
                // The courier's own status, at depth.
                let courier = try #require(stored.courier)
                #expect(courier.id == 7)
                #expect(courier.name == "Swift Couriers")
                #expect(courier.syncStatus == .synced)
            } else {
                #expect(stored.courier == nil)
            }
            try expectRow(garage, V1.Parcel.self, parcel.id, status: parcel.status, revision: parcel.revision)
        }
        try expectRow(garage, V1.Courier.self, 7, status: .synced, isRoot: false)

        let receipt = try #require(try garage.retrieve(V1.Receipt.self, identifier: "r-1"))
        #expect(receipt.id == "r-1")
        #expect(receipt.amount == Decimal(string: "19.99"))
        try expectRow(garage, V1.Receipt.self, "r-1", status: .undetermined)

        // A claim taken when the file was written still holds its row.
        let claimed = try #require(try garage.retrieve(V1.Manifest.self, identifier: "m-claimed"))
        #expect(claimed.lines == 3)
        #expect(claimed.syncStatus == .syncing)
        let waiting = try #require(try garage.retrieve(V1.Manifest.self, identifier: "m-waiting"))
        #expect(waiting.lines == 5)
        #expect(waiting.syncStatus == .notSynced)
        try expectRow(garage, V1.Manifest.self, "m-claimed", status: .syncing, isClaimed: true)
        try expectRow(garage, V1.Manifest.self, "m-waiting", status: .notSynced)

        let claim = try garage.claim(V1.Manifest.self, limit: 10, status: .notSynced)
        #expect(claim.identifiers == ["m-waiting"])
        #expect(try garage.complete(claim).synced == ["m-waiting"])
        #expect(try garage.releaseStaleClaims(olderThan: 0) == 1)
        try expectRow(garage, V1.Manifest.self, "m-claimed", status: .notSynced)
        #expect(try garage.syncStatusCounts([.notSynced, .syncing, .synced])["Manifest"] == [.notSynced: 1, .synced: 1])
        fixture.expectOriginalUnchanged()
    }

    // MARK: - hashable.garage

    /// The SHA-256 of each object's canonical JSON, as format version 1 computed it. If they
    /// changed, parking an object again would make a second row instead of finding its own.
    static let tagIdentifiers = (
        urgent: "575d3837f379f6636100a66fb7ba0a2d6e9edeadcf57405af78380ce2f6267b5",
        later: "7b8b17ff1052f40c41a1de86c54b3cbb8f568dd4b459455b47aebf9184529231",
        unicode: "01bc2f3f05d23a5922e3d80f22aebb17a88726eb1b8728ff4c74f9f05987a144")
    static let coordinateIdentifiers = (
        paris: "34bda87d3242a5193bbe064c6ec3e09ec237c4b0794d8368a25a665b16115c56",
        sydney: "9999cb0e1a8f7345a6839a4da2e3d2e9aeee4691a6c9d8542fff52d03b0b11b1")
    static let kitIdentifiers = (
        starter: "219eec6a7afa65c83e0d905f69be10c6314e4a6fe95c1267b4d4ae67f53eeb8d",
        empty: "2caa5e49b362ba2ca8c2c41b5545cd075b749e1ca291c5d625936ea1aa971d2e")

    @Test func hashableIdentities() throws {
        let fixture = try FixtureFile("hashable.garage")
        let garage = try Garage(path: fixture.path)
        let ids = Self.tagIdentifiers

        #expect(try garage.count(V1.Tag.self) == 3)
        #expect(try garage.count(V1.Coordinate.self) == 2)
        #expect(try garage.count(V1.Kit.self) == 2)
        #expect(try garage.count(V1.Maker.self) == 1)
        #expect(try garage.identifiers(of: V1.Tag.self).sorted() == [ids.unicode, ids.urgent, ids.later])

        let urgent = V1.Tag(label: "urgent", color: "red")
        let later = V1.Tag(label: "later", color: nil)
        let unicode = V1.Tag(label: "ünïcödé 🏷", color: "#00FF00")
        for (tag, identifier) in [(urgent, ids.urgent), (later, ids.later), (unicode, ids.unicode)] {
            #expect(try garage.identifier(for: tag) == identifier)
            let stored = try #require(try garage.retrieve(V1.Tag.self, identifier: identifier))
            #expect(stored.label == tag.label)
            #expect(stored.color == tag.color)
            try expectRow(garage, V1.Tag.self, identifier)
        }

        // The status is not part of the identity; the row holds it.
        let paris = V1.Coordinate(latitude: 48.8566, longitude: 2.3522, syncStatus: .undetermined)
        let sydney = V1.Coordinate(latitude: -33.8688, longitude: 151.2093, syncStatus: .undetermined)
        for (coordinate, identifier, status) in [
            (paris, Self.coordinateIdentifiers.paris, SyncStatus.notSynced),
            (sydney, Self.coordinateIdentifiers.sydney, .synced),
        ] {
            #expect(try garage.identifier(for: coordinate) == identifier)
            let stored = try #require(try garage.retrieve(V1.Coordinate.self, identifier: identifier))
            #expect(stored.latitude == coordinate.latitude)
            #expect(stored.longitude == coordinate.longitude)
            #expect(stored.syncStatus == status)
            #expect(try garage.syncStatus(for: coordinate) == status)
            try expectRow(garage, V1.Coordinate.self, identifier, status: status)
        }

        // A set (in canonical order) and a reference are part of the content identifier.
        let acme = V1.Maker(id: "m-acme", name: "ACME")
        let starter = V1.Kit(name: "Starter", tags: [later, urgent], maker: acme)
        let empty = V1.Kit(name: "Empty", tags: [], maker: acme)
        for (kit, identifier) in [(starter, Self.kitIdentifiers.starter), (empty, Self.kitIdentifiers.empty)] {
            #expect(try garage.identifier(for: kit) == identifier)
            let stored = try #require(try garage.retrieve(V1.Kit.self, identifier: identifier))
            #expect(stored.name == kit.name)
            #expect(stored.tags == kit.tags)
            #expect(stored.maker.id == "m-acme")
            #expect(stored.maker.name == "ACME")
            try expectRow(garage, V1.Kit.self, identifier)
        }
        try expectRow(garage, V1.Maker.self, "m-acme", isRoot: false)

        // Parking the same content again finds the v1 rows.
        try garage.parkAll([urgent, later, unicode])
        try garage.park(starter)
        #expect(try garage.count(V1.Tag.self) == 3)
        #expect(try garage.count(V1.Kit.self) == 2)
        try expectRow(garage, V1.Tag.self, ids.urgent)
        try expectRow(garage, V1.Kit.self, Self.kitIdentifiers.starter)
        fixture.expectOriginalUnchanged()
    }

    // MARK: - encrypted.garage

    static let openBookID = UUID(uuidString: "0B7E0B7E-0000-4000-8000-000000000002")!
    static let nightjarID = UUID(uuidString: "A6E3D1C0-5B4A-4938-8271-605F4E3D2C1B")!

    @Test func anEncryptedStore() throws {
        let fixture = try FixtureFile("encrypted.garage")
        let bytes = try fixture.bytes()
        #expect(bytes.range(of: Data("Not a secret".utf8)) != nil, "the row parked without a delegate is plaintext")
        for secret in ["treasure", "Nightjar", "sécret", "987654"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is in the file")
        }

        let garage = try Garage(path: fixture.path)
        #expect(try garage.count(V1.Secret.self) == 3)
        #expect(try garage.count(V1.Agent.self) == 2)

        // Without the delegate: the plaintext rows read, the encrypted ones say why they don't.
        try expectPlainSecret(try #require(try garage.retrieve(V1.Secret.self, identifier: "s-plain")))
        #expect(throws: GarageError.missingEncryptionDelegate(typeName: "Secret", identifier: "s-1")) {
            try garage.retrieve(V1.Secret.self, identifier: "s-1")
        }

        garage.dataEncryptionDelegate = TestEncryptor(key: SymmetricKey(data: V1.encryptionKey))
        try expectPlainSecret(try #require(try garage.retrieve(V1.Secret.self, identifier: "s-plain")))
        for (id, text, pin) in [("s-1", "The treasure is under the old oak 🌳", 1234), ("s-2", "Ünïcödé sécret", 987_654)] {
            let secret = try #require(try garage.retrieve(V1.Secret.self, identifier: id))
            #expect(secret.id == id)
            #expect(secret.text == text)
            #expect(secret.pin == pin)
            #expect(secret.keeper.id == Self.nightjarID)
            #expect(secret.keeper.codename == "Nightjar")
            #expect(secret.keeper.syncStatus == .notSynced)
            try expectRow(garage, V1.Secret.self, id, isEncrypted: true)
        }
        try expectRow(garage, V1.Secret.self, "s-plain", isEncrypted: false)
        try expectRow(garage, V1.Agent.self, Self.nightjarID, status: .notSynced, isRoot: false, isEncrypted: true)
        try expectRow(garage, V1.Agent.self, Self.openBookID, isRoot: false, isEncrypted: false)

        garage.dataEncryptionDelegate = TestEncryptor() // another key
        let error = try #require(throws: GarageError.self) {
            try garage.retrieve(V1.Secret.self, identifier: "s-2")
        }
        #expect({ if case .decryptionFailed(_, "s-2", _) = error { true } else { false } }(), "\(error)")
        fixture.expectOriginalUnchanged()
    }

    private func expectPlainSecret(_ secret: V1.Secret, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(secret.id == "s-plain", sourceLocation: sourceLocation)
        #expect(secret.text == "Not a secret", sourceLocation: sourceLocation)
        #expect(secret.pin == 0, sourceLocation: sourceLocation)
        #expect(secret.keeper.id == Self.openBookID, sourceLocation: sourceLocation)
        #expect(secret.keeper.codename == "Open Book", sourceLocation: sourceLocation)
        #expect(secret.keeper.syncStatus == .undetermined, sourceLocation: sourceLocation)
    }

    // MARK: - empty.garage

    @Test func anEmptyStore() throws {
        let fixture = try FixtureFile("empty.garage")
        let garage = try Garage(path: fixture.path)
        #expect(try garage.count(V1.Gadget.self) == 0)
        #expect(try garage.syncStatusCounts() == [:])
        try garage.park(V1.Tally(id: 1, value: 2))
        #expect(try garage.retrieve(V1.Tally.self, identifier: 1)?.value == 2)
        fixture.expectOriginalUnchanged()
    }

    // MARK: - Metadata

    /// The rows' own dates were taken when the files were written, in November 2026. Read in
    /// another epoch (seconds since 2001 rather than 1970), they would fall decades away.
    static let writtenAfter = Date(timeIntervalSince1970: 1_767_225_600) // 2026-01-01
    static let writtenBefore = Date(timeIntervalSince1970: 1_798_761_600) // 2027-01-01

    private func expectRow<T, ID: GarageIdentifier>(
        _ garage: Garage, _ type: T.Type, _ identifier: ID, status: SyncStatus = .undetermined,
        isRoot: Bool = true, revision: Int64 = 1, isEncrypted: Bool = false, isClaimed: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let metadata = try #require(try garage.metadata(type, identifier: identifier),
                                    "no row \(type)(\(identifier))", sourceLocation: sourceLocation)
        let row = "\(metadata.typeName)(\(metadata.identifier))"
        #expect(metadata.syncStatus == status, "\(row)", sourceLocation: sourceLocation)
        #expect(metadata.isRoot == isRoot, "\(row)", sourceLocation: sourceLocation)
        #expect(metadata.revision == revision, "\(row)", sourceLocation: sourceLocation)
        #expect(metadata.isEncrypted == isEncrypted, "\(row)", sourceLocation: sourceLocation)
        #expect(metadata.creationDate >= Self.writtenAfter && metadata.creationDate < Self.writtenBefore,
                "\(row) created \(metadata.creationDate)", sourceLocation: sourceLocation)
        if revision == 1 {
            #expect(metadata.modificationDate == metadata.creationDate, "\(row)", sourceLocation: sourceLocation)
        } else {
            #expect(metadata.modificationDate > metadata.creationDate, "\(row)", sourceLocation: sourceLocation)
            #expect(metadata.modificationDate < Self.writtenBefore, "\(row)", sourceLocation: sourceLocation)
        }
        if isClaimed {
            let claimDate = try #require(metadata.claimDate, "\(row) is not claimed", sourceLocation: sourceLocation)
            #expect(claimDate >= metadata.modificationDate && claimDate < Self.writtenBefore,
                    "\(row) claimed \(claimDate)", sourceLocation: sourceLocation)
        } else {
            #expect(metadata.claimDate == nil, "\(row)", sourceLocation: sourceLocation)
        }
    }
}
