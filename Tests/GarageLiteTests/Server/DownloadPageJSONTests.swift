import Crypto
import Foundation
import GarageLite
import GarageLiteServer
import Testing

/// Issue 44: a download page sends each object's stored JSON as it is when Foundation reads it
/// back as the garage would, and encodes the others: the page a device decodes is the same
/// either way.
@Suite("Download pages as JSON")
struct DownloadPageJSONTests {
    enum Mood: String, Codable, Equatable {
        case calm
        case hurried = "in a \"hurry\""
    }

    struct Place: Codable, Equatable {
        var name: String
        var latitude: Double
    }

    /// A value of every kind Foundation's coders give a form of their own, and strings that
    /// need escaping.
    struct WireCard: Codable, Identifiable, Equatable {
        var id: String
        var team: String
        var title: String
        var due: Date
        var done: Date?
        var blob: Data
        var link: URL
        var amount: Decimal
        var ratio: Double
        var count: Int
        var mood: Mood
        var place: Place?
        var tags: [String]
        var scores: [Int: Double]

        enum CodingKeys: String, CodingKey {
            case id, team, title = "headline", due, done, blob, link, amount, ratio, count, mood, place, tags, scores
        }
    }

    struct WireStep: Codable, Identifiable, Equatable {
        var id: String
        var text: String
    }

    /// An object that references others: its JSON holds their stubs.
    struct WirePlan: Codable, Identifiable, Equatable {
        var id: String
        var team: String
        var steps: [WireStep]
    }

    static func card(_ id: String, team: String = "a") -> WireCard {
        WireCard(id: id, team: team, title: "a \"quoted\" title\nwith a line, a tab\t, \u{1F600} and \\ slashes",
             due: Date(timeIntervalSinceReferenceDate: 812_345_678.123_456_7), done: nil,
             blob: Data([0, 1, 2, 250, 255]), link: URL(string: "https://example.com/a?b=c&d=é")!,
             amount: Decimal(string: "12345.6789")!, ratio: 0.1 + 0.2, count: -42, mood: .hurried,
             place: Place(name: "Zürich", latitude: 47.376_887), tags: ["x", "", "ü"], scores: [1: 0.5, -3: 1e-300])
    }

    /// The JSON page and the typed page of the same request, the JSON decoded as a device does.
    func pages<T: Codable & Sendable & SendableMetatype>(
        _ server: SyncServer, _ type: T.Type, _ typeName: String, scopes: Set<String>, cursor: String? = nil
    ) async throws -> (json: DownloadBatch<T>, typed: DownloadBatch<T>) {
        let access = SyncAccess(user: "u", scopes: scopes)
        let request = DownloadRequest<T>(typeName: typeName, cursor: cursor)
        let json = try await server.download(typeName: typeName, json: try JSONEncoder().encode(request), access: access)
        let typed = try await server.download(request, access: access)
        return (try JSONDecoder().decode(DownloadBatch<T>.self, from: json), typed)
    }

    func upload<T: Codable & Sendable & SendableMetatype>(_ server: SyncServer, _ changes: [SyncChange<T>], _ typeName: String,
                                                         scopes: Set<String>) async throws {
        let results = try await server.upload(UploadBatch(typeName: typeName, changes: changes), access: SyncAccess(user: "u", scopes: scopes))
        for (identifier, result) in results.results {
            guard case .accepted = result else { Issue.record("\(identifier): \(result)"); return }
        }
    }

    @Test func aPageOfStoredJSONReadsBackAsTheTypedPage() async throws {
        let garage = try TestEngine.garage()
        let server = SyncServer(garage: garage, pageSize: 3)
        try server.serve(WireCard.self, rules: SyncRules(scope: { $0.team }))
        var cards = (0..<5).map { Self.card("card \"\($0)\"\u{7}") }
        cards[1].done = Date(timeIntervalSince1970: 0)
        cards[2].place = nil
        try await upload(server, cards.map { SyncChange(identifier: $0.id, object: $0, version: nil) }, "WireCard", scopes: ["a"])
        try await upload(server, [SyncChange<WireCard>(identifier: cards[3].id, object: nil, version: "1")], "WireCard", scopes: ["a"])
        var cursor: String?
        var received: [String: WireCard] = [:]
        var deleted: [String] = []
        repeat {
            let (json, typed) = try await pages(server, WireCard.self, "WireCard", scopes: ["a"], cursor: cursor)
            #expect(json.changes.map(\.identifier) == typed.changes.map(\.identifier))
            #expect(json.changes.map(\.object) == typed.changes.map(\.object))
            #expect(json.changes.map(\.version) == typed.changes.map(\.version))
            #expect(json.changes.map(\.changeID) == typed.changes.map(\.changeID))
            #expect(json.cursor == typed.cursor && json.hasMore == typed.hasMore && json.rebase == typed.rebase)
            for change in json.changes {
                if let object = change.object { received[change.identifier] = object } else { deleted.append(change.identifier) }
            }
            cursor = json.cursor
            guard json.hasMore else { break }
        } while true
        #expect(received == Dictionary(uniqueKeysWithValues: cards.enumerated().filter { $0.offset != 3 }.map { ($0.element.id, $0.element) }))
        #expect(deleted == [cards[3].id])
        // The plain cards went as stored: the snapshot hands their JSON out.
        let first = cards[0]
        let stored = try await garage.readingSnapshot("read") { try $0.foundationJSON(typeName: "WireCard", identifiers: [first.id]) }
        let json = try #require(stored.first ?? nil)
        #expect(try JSONDecoder().decode(WireCard.self, from: Data(json.utf8)) == first)
    }

    @Test func anObjectWithReferencesIsEncodedAndReadsBackWhole() async throws {
        let garage = try TestEngine.garage()
        let server = SyncServer(garage: garage)
        try server.serve(WirePlan.self, rules: SyncRules(scope: { $0.team }))
        let plans = [WirePlan(id: "p1", team: "a", steps: [WireStep(id: "s1", text: "one"), WireStep(id: "s2", text: "two")]),
                     WirePlan(id: "p2", team: "a", steps: [])]
        try await upload(server, plans.map { SyncChange(identifier: $0.id, object: $0, version: nil) }, "WirePlan", scopes: ["a"])
        let (json, typed) = try await pages(server, WirePlan.self, "WirePlan", scopes: ["a"])
        #expect(json.changes.map(\.object) == plans)
        #expect(typed.changes.map(\.object) == plans)
        let stored = try await garage.readingSnapshot("read") { try $0.foundationJSON(typeName: "WirePlan", identifiers: ["p1", "p2"]) }
        #expect(stored[0] == nil, "p1 references its steps: only the garage reads its JSON back")
        #expect(stored[1] != nil, "p2 references nothing")
    }

    @Test func theStoredJSONIsLeftOutWhereOnlyTheGarageReadsItBack() async throws {
        let garage = try TestEngine.garage()
        try garage.register(PDog.self, PCat.self, PParrot.self)
        try await garage.park(PHousehold(id: "h", pets: [PDog(name: "Rex", breed: "collie")], favorite: nil, byRoom: [:]))
        try await garage.park(WireStep(id: "kept", text: "here"))
        try await garage.park(WireStep(id: "gone", text: "deleted"))
        try await garage.delete(WireStep.self, identifier: "gone")
        let household = try garage.storedTypeName(PHousehold.self), step = try garage.storedTypeName(WireStep.self)
        let found = try await garage.readingSnapshot("read") { snapshot in
            (try snapshot.foundationJSON(typeName: household, identifiers: ["h"]),
             try snapshot.foundationJSON(typeName: step, identifiers: ["kept", "gone", "missing"]))
        }
        #expect(found.0 == [nil], "a polymorphic value is stored with @type")
        #expect(found.1[0] == #"{"id":"kept","text":"here"}"#)
        #expect(found.1[1] == nil && found.1[2] == nil, "deleted, missing")

        // Dates written otherwise than JSONEncoder's default: nothing is sent as stored.
        let iso = try TestEngine.garage()
        iso.dateEncodingStrategy = .iso8601
        try await iso.park(Self.card("c"))
        let card = try iso.storedTypeName(WireCard.self)
        #expect(try await iso.readingSnapshot("read") { try $0.foundationJSON(typeName: card, identifiers: ["c"]) } == [nil])
    }

    /// (A server's feed queries can't run on an encrypted store; the snapshot's read still
    /// decrypts.)
    @Test func anEncryptedStoreHandsOutTheDecryptedJSON() async throws {
        let garage = try TestEngine.garage(encryptionKey: .key(SymmetricKey(size: .bits256)))
        let card = Self.card("secret")
        try await garage.park(card)
        let typeName = try garage.storedTypeName(WireCard.self)
        let stored = try await garage.readingSnapshot("read") { try $0.foundationJSON(typeName: typeName, identifiers: [card.id]) }
        #expect(try stored[0].map { try JSONDecoder().decode(WireCard.self, from: Data($0.utf8)) } == card)
    }
}
