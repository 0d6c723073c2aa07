import Foundation
@testable import GarageLite
import Testing

struct FieldMergeAddress: Codable, Equatable, Sendable {
    var street: String
    var city: String
    var zip: String?
}

struct FieldMergeNote: Codable, Equatable, Sendable {
    var title: String
    var body: String = ""
    var rating: Int = 0
    var tags: [String] = []
    var subtitle: String?
    var address = FieldMergeAddress(street: "1 Main St", city: "Paris", zip: "75001")
}

/// A nested struct that may be missing: without it in the base, the two sides' versions have
/// no base to merge against.
struct FieldMergeProfile: Codable, Equatable, Sendable {
    var name: String
    var address: FieldMergeAddress?
}

/// The record of the property-based loop: five properties, two of them optional.
struct FieldMergeRecord: Codable, Equatable, Sendable {
    var count: Int
    var name: String
    var score: Int?
    var nickname: String?
    var rank: Int
}

/// A range whose decoding refuses a lower bound above the upper one, as a model's invariant.
struct FieldMergeRange: Codable, Equatable, Sendable {
    var lower: Int
    var upper: Int

    struct Inverted: Error {}
}

extension FieldMergeRange {
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        lower = try container.decode(Int.self, forKey: .lower)
        upper = try container.decode(Int.self, forKey: .upper)
        if lower > upper { throw Inverted() }
    }
}

/// A value whose encoding fails when asked to.
struct FieldMergeFaulty: Codable, Equatable, Sendable {
    var fails: Bool

    struct Refused: Error {}

    func encode(to encoder: any Encoder) throws {
        if fails { throw Refused() }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fails, forKey: .fails)
    }
}

/// A value that writes a nil optional as `null`, or leaves its key out.
struct FieldMergeExplicitNull: Codable, Equatable, Sendable {
    var value: String?
    var omitted = false

    enum CodingKeys: String, CodingKey { case value }
}

extension FieldMergeExplicitNull {
    init(from decoder: any Decoder) throws {
        value = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(String.self, forKey: .value)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if !omitted { try container.encode(value, forKey: .value) }
    }
}

/// A class that is not `Sendable`: a merge of it is, its closure being `@Sendable`.
final class FieldMergeBox: Codable {
    var value: Int
    init(value: Int) { self.value = value }
}

/// ``SyncMerge``: the field-level three-way merge of Codable values and the app's own merge.
@Suite("Field merge", .firstPassOnly)
struct FieldMergeTests {
    static let base = FieldMergeNote(title: "Draft", body: "Text", rating: 3, tags: ["a"], subtitle: "Sub")

    // MARK: One side changed

    @Test func aPropertyOnlyTheLocalSideChangedTakesTheLocalValue() throws {
        var local = Self.base
        local.title = "Mine"
        for policy in [FieldConflictPolicy.lastWriterWins, .serverWins] {
            let result = try SyncMerge<FieldMergeNote>.fields(bothChanged: policy)
                .merge(base: Self.base, local: local, downloaded: Self.base)
            #expect(result.object == local)
            #expect(result.discarded.isEmpty)
        }
    }

    @Test func aPropertyOnlyTheServerChangedTakesTheDownloadedValue() throws {
        var downloaded = Self.base
        downloaded.rating = 5
        for policy in [FieldConflictPolicy.lastWriterWins, .serverWins] {
            let result = try SyncMerge<FieldMergeNote>.fields(bothChanged: policy)
                .merge(base: Self.base, local: Self.base, downloaded: downloaded)
            #expect(result.object == downloaded)
            #expect(result.discarded.isEmpty)
        }
    }

    @Test func changesToDifferentPropertiesAreAllKept() throws {
        var local = Self.base, downloaded = Self.base
        local.title = "Mine"
        local.tags = ["a", "b"]
        downloaded.body = "Theirs"
        downloaded.rating = 4
        let result = try SyncMerge<FieldMergeNote>.fields().merge(base: Self.base, local: local, downloaded: downloaded)
        var expected = Self.base
        expected.title = "Mine"
        expected.tags = ["a", "b"]
        expected.body = "Theirs"
        expected.rating = 4
        #expect(result.object == expected)
        #expect(result.discarded.isEmpty)
    }

    // MARK: Both changed

    @Test func bothChangedFollowsThePolicy() throws {
        var local = Self.base, downloaded = Self.base
        local.title = "Mine"
        downloaded.title = "Theirs"
        local.rating = 1
        downloaded.rating = 5
        downloaded.body = "Server body"
        let lastWriter = try SyncMerge<FieldMergeNote>.fields().merge(base: Self.base, local: local, downloaded: downloaded)
        #expect(lastWriter.object.title == "Mine")
        #expect(lastWriter.object.rating == 1)
        #expect(lastWriter.object.body == "Server body")
        // In key order (the encoder sorts them), local's first.
        #expect(lastWriter.discarded == ["rating", "title"])
        let server = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: Self.base, local: local, downloaded: downloaded)
        #expect(server.object.title == "Theirs")
        #expect(server.object.rating == 5)
        #expect(server.object.body == "Server body")
        #expect(server.discarded == ["rating", "title"])
    }

    @Test func chooseGetsEachPropertysPath() throws {
        var local = Self.base, downloaded = Self.base
        local.title = "Mine"
        downloaded.title = "Theirs"
        local.address.city = "Lyon"
        downloaded.address.city = "Nice"
        local.address.street = "2 Side St"
        downloaded.address.street = "3 Other St"
        // The local side for the city, the server's elsewhere.
        let merge = SyncMerge<FieldMergeNote>.fields(bothChanged: .choose { path in
            path == ["address", "city"] ? .local : .downloaded
        })
        let result = try merge.merge(base: Self.base, local: local, downloaded: downloaded)
        #expect(result.object.title == "Theirs")
        #expect(result.object.address.city == "Lyon")
        #expect(result.object.address.street == "3 Other St")
        #expect(result.object.address.zip == "75001")
        #expect(result.discarded == ["address.city", "address.street", "title"])
    }

    @Test func equalChangesOnBothSidesAreNotDiscarded() throws {
        var local = Self.base, downloaded = Self.base
        local.title = "Same"
        downloaded.title = "Same"
        local.address.city = "Lyon"
        downloaded.address.city = "Lyon"
        local.tags = ["x", "y"]
        downloaded.tags = ["x", "y"]
        for policy in [FieldConflictPolicy.lastWriterWins, .serverWins] {
            let result = try SyncMerge<FieldMergeNote>.fields(bothChanged: policy)
                .merge(base: Self.base, local: local, downloaded: downloaded)
            #expect(result.object == local)
            #expect(result.discarded.isEmpty)
        }
    }

    // MARK: Nested structs, arrays, optionals

    @Test func aNestedStructIsMergedPropertyByProperty() throws {
        var local = Self.base, downloaded = Self.base
        local.address.street = "2 Side St"
        downloaded.address.city = "Lyon"
        downloaded.address.zip = nil
        let result = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: Self.base, local: local, downloaded: downloaded)
        #expect(result.object.address == FieldMergeAddress(street: "2 Side St", city: "Lyon", zip: nil))
        #expect(result.discarded.isEmpty)
    }

    @Test func nestedStructsAddedOnBothSidesHaveNoBase() throws {
        let base = FieldMergeProfile(name: "Ann", address: nil)
        let local = FieldMergeProfile(name: "Ann", address: FieldMergeAddress(street: "1 Main St", city: "Lyon", zip: "69001"))
        let downloaded = FieldMergeProfile(name: "Ann", address: FieldMergeAddress(street: "1 Main St", city: "Nice", zip: nil))
        let lastWriter = try SyncMerge<FieldMergeProfile>.fields().merge(base: base, local: local, downloaded: downloaded)
        #expect(lastWriter.object == local)
        #expect(lastWriter.discarded == ["address.city", "address.zip"])
        let server = try SyncMerge<FieldMergeProfile>.fields(bothChanged: .serverWins)
            .merge(base: base, local: local, downloaded: downloaded)
        #expect(server.object == downloaded)
        #expect(server.discarded == ["address.city", "address.zip"])
    }

    @Test func arraysAreOneProperty() throws {
        var local = Self.base, downloaded = Self.base
        local.tags = ["a", "b"]
        downloaded.tags = ["a", "c"]
        let lastWriter = try SyncMerge<FieldMergeNote>.fields().merge(base: Self.base, local: local, downloaded: downloaded)
        #expect(lastWriter.object.tags == ["a", "b"])
        #expect(lastWriter.discarded == ["tags"])
        let server = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: Self.base, local: local, downloaded: downloaded)
        #expect(server.object.tags == ["a", "c"])
        #expect(server.discarded == ["tags"])

        // An array one side changed is that side's, whole.
        let oneSide = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: Self.base, local: local, downloaded: Self.base)
        #expect(oneSide.object.tags == ["a", "b"])
        #expect(oneSide.discarded.isEmpty)
    }

    @Test func anOptionalRemovedOnOneSideIsAChange() throws {
        var removed = Self.base
        removed.subtitle = nil
        // Removed on one side, unchanged on the other: removed.
        let local = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: Self.base, local: removed, downloaded: Self.base)
        #expect(local.object.subtitle == nil)
        #expect(local.discarded.isEmpty)
        let server = try SyncMerge<FieldMergeNote>.fields()
            .merge(base: Self.base, local: Self.base, downloaded: removed)
        #expect(server.object.subtitle == nil)
        #expect(server.discarded.isEmpty)

        // Removed on one side, changed on the other: both changed.
        var changed = Self.base
        changed.subtitle = "New"
        let lastWriter = try SyncMerge<FieldMergeNote>.fields().merge(base: Self.base, local: removed, downloaded: changed)
        #expect(lastWriter.object.subtitle == nil)
        #expect(lastWriter.discarded == ["subtitle"])
        let serverWins = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: Self.base, local: removed, downloaded: changed)
        #expect(serverWins.object.subtitle == "New")
        #expect(serverWins.discarded == ["subtitle"])
    }

    @Test func aMissingKeyIsNotNull() throws {
        // The base wrote null; local left the key out, a change; the server changed it too.
        let base = FieldMergeExplicitNull(value: nil), local = FieldMergeExplicitNull(value: nil, omitted: true)
        let result = try SyncMerge<FieldMergeExplicitNull>.fields(bothChanged: .serverWins)
            .merge(base: base, local: local, downloaded: FieldMergeExplicitNull(value: "x"))
        #expect(result.object.value == "x")
        #expect(result.discarded == ["value"])
        // Null on both sides, though the base had no key: the same change.
        let same = try SyncMerge<FieldMergeExplicitNull>.fields()
            .merge(base: local, local: base, downloaded: base)
        #expect(same.object.value == nil)
        #expect(same.discarded.isEmpty)
    }

    @Test func anOptionalAddedOnOneSideIsKept() throws {
        var base = Self.base
        base.subtitle = nil
        var added = base
        added.subtitle = "Added"
        let result = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: base, local: added, downloaded: base)
        #expect(result.object.subtitle == "Added")
        #expect(result.discarded.isEmpty)
    }

    // MARK: Without a base

    @Test func withoutABaseEveryDifferenceIsAConflict() throws {
        var local = Self.base, downloaded = Self.base
        local.title = "Mine"
        downloaded.title = "Theirs"
        local.rating = 7                    // only the local side "changed" it, but no base says so
        local.subtitle = nil                // local's members: address, body, rating, tags, title
        downloaded.address.city = "Lyon"
        let lastWriter = try SyncMerge<FieldMergeNote>.fields().merge(base: nil, local: local, downloaded: downloaded)
        #expect(lastWriter.object == local)
        // Local's members in order, then the one only the server has.
        #expect(lastWriter.discarded == ["address.city", "rating", "title", "subtitle"])
        let server = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: nil, local: local, downloaded: downloaded)
        #expect(server.object == downloaded)
        #expect(server.discarded == ["address.city", "rating", "title", "subtitle"])
    }

    @Test func withoutABaseEqualVersionsMergeToThemselves() throws {
        let result = try SyncMerge<FieldMergeNote>.fields(bothChanged: .serverWins)
            .merge(base: nil, local: Self.base, downloaded: Self.base)
        #expect(result.object == Self.base)
        #expect(result.discarded.isEmpty)
    }

    // MARK: Values that are not objects

    @Test func aSingleValueIsOnePropertyAtTheEmptyPath() throws {
        let lastWriter = try SyncMerge<Int>.fields().merge(base: 1, local: 2, downloaded: 3)
        #expect(lastWriter.object == 2)
        #expect(lastWriter.discarded == [""])
        let server = try SyncMerge<Int>.fields(bothChanged: .serverWins).merge(base: 1, local: 2, downloaded: 3)
        #expect(server.object == 3)
        #expect(server.discarded == [""])
        let chosen = try SyncMerge<Int>.fields(bothChanged: .choose { $0.isEmpty ? .downloaded : .local })
            .merge(base: 1, local: 2, downloaded: 3)
        #expect(chosen.object == 3)
        let oneSide = try SyncMerge<Int>.fields(bothChanged: .serverWins).merge(base: 1, local: 2, downloaded: 1)
        #expect(oneSide.object == 2)
        #expect(oneSide.discarded.isEmpty)
        let array = try SyncMerge<[Int]>.fields().merge(base: [1], local: [1, 2], downloaded: [1, 3])
        #expect(array.object == [1, 2])
        #expect(array.discarded == [""])
    }

    // MARK: Errors

    @Test func anEncodingErrorIsThrown() {
        let merge = SyncMerge<FieldMergeFaulty>.fields()
        #expect(throws: FieldMergeFaulty.Refused.self) {
            try merge.merge(base: nil, local: FieldMergeFaulty(fails: true), downloaded: FieldMergeFaulty(fails: false))
        }
        #expect(throws: FieldMergeFaulty.Refused.self) {
            try merge.merge(base: FieldMergeFaulty(fails: true), local: FieldMergeFaulty(fails: false),
                            downloaded: FieldMergeFaulty(fails: false))
        }
    }

    @Test func aDecodingErrorIsThrown() throws {
        let base = FieldMergeRange(lower: 0, upper: 10)
        // Each side's edit is valid, their merge is not.
        let merge = SyncMerge<FieldMergeRange>.fields()
        #expect(throws: FieldMergeRange.Inverted.self) {
            try merge.merge(base: base, local: FieldMergeRange(lower: 5, upper: 10), downloaded: FieldMergeRange(lower: 0, upper: 3))
        }
    }

    // MARK: The app's merge

    @Test func aCustomMergeGetsTheThreeVersions() throws {
        let merge = SyncMerge<FieldMergeNote>.custom { base, local, downloaded in
            var merged = downloaded
            merged.tags = Array(Set(local.tags).union(downloaded.tags)).sorted()
            merged.body = base?.body ?? "no base"
            return merged
        }
        var local = Self.base, downloaded = Self.base
        local.tags = ["b"]
        downloaded.tags = ["c"]
        downloaded.title = "Theirs"
        let result = try merge.merge(base: Self.base, local: local, downloaded: downloaded)
        #expect(result.object.tags == ["b", "c"])
        #expect(result.object.title == "Theirs")
        #expect(result.object.body == "Text")
        #expect(result.discarded.isEmpty)
        #expect(try merge.merge(base: nil, local: local, downloaded: downloaded).object.body == "no base")
        struct Refused: Error {}
        let failing = SyncMerge<FieldMergeNote>.custom { _, _, _ in throw Refused() }
        #expect(throws: Refused.self) { try failing.merge(base: nil, local: local, downloaded: downloaded) }
    }

    @Test func aMergeIsSendableWhateverItsObject() throws {
        func sendable<T: Sendable>(_ value: T) -> T { value }
        let merge = sendable(SyncMerge<FieldMergeBox>.fields())
        let result = try merge.merge(base: FieldMergeBox(value: 1), local: FieldMergeBox(value: 1), downloaded: FieldMergeBox(value: 2))
        #expect(result.object.value == 2)
    }

    // MARK: Properties, on random edits

    /// One property of ``FieldMergeRecord``: its coding key and how to compare it.
    struct Property {
        var name: String
        var equal: (FieldMergeRecord, FieldMergeRecord) -> Bool
        init<Value: Equatable>(_ name: String, _ keyPath: KeyPath<FieldMergeRecord, Value>) {
            self.name = name
            self.equal = { $0[keyPath: keyPath] == $1[keyPath: keyPath] }
        }
    }

    static func randomRecord(_ random: inout SplitMix64) -> FieldMergeRecord {
        // Few values, so that both sides often make the same edit.
        let names = ["", "a", "b", "é\u{1F600}"]
        return FieldMergeRecord(
            count: Int.random(in: -2...2, using: &random),
            name: names.randomElement(using: &random)!,
            score: Bool.random(using: &random) ? nil : Int.random(in: 0...2, using: &random),
            nickname: Bool.random(using: &random) ? nil : names.randomElement(using: &random)!,
            rank: Int.random(in: 0...2, using: &random)
        )
    }

    /// The base with each property, at random, replaced by `other`'s.
    static func edit(_ base: FieldMergeRecord, _ random: inout SplitMix64) -> FieldMergeRecord {
        let other = randomRecord(&random)
        var edited = base
        if Bool.random(using: &random) { edited.count = other.count }
        if Bool.random(using: &random) { edited.name = other.name }
        if Bool.random(using: &random) { edited.score = other.score }
        if Bool.random(using: &random) { edited.nickname = other.nickname }
        if Bool.random(using: &random) { edited.rank = other.rank }
        return edited
    }

    @Test func randomEditsFollowTheRules() throws {
        let properties = [
            Property("count", \.count), Property("name", \.name), Property("score", \.score),
            Property("nickname", \.nickname), Property("rank", \.rank),
        ]
        var random = SplitMix64(state: 0x4669_656C_644D_6572)
        // How often each rule applied, so that the loop is seen to try them all.
        var seen = (unchanged: 0, localOnly: 0, downloadedOnly: 0, sameChange: 0, conflicts: 0)
        for run in 0..<400 {
            let base = Self.randomRecord(&random)
            let local = Self.edit(base, &random)
            let downloaded = Self.edit(base, &random)
            let knowsBase = Int.random(in: 0..<5, using: &random) != 0
            let localNames = Set(properties.map(\.name).filter { _ in Bool.random(using: &random) })
            let policy: FieldConflictPolicy
            let winner: (String) -> FieldConflictSide
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                policy = .lastWriterWins
                winner = { _ in .local }
            case 1:
                policy = .serverWins
                winner = { _ in .downloaded }
            default:
                policy = .choose { path in localNames.contains(path.joined(separator: ".")) ? .local : .downloaded }
                winner = { localNames.contains($0) ? .local : .downloaded }
            }
            let result = try SyncMerge<FieldMergeRecord>.fields(bothChanged: policy)
                .merge(base: knowsBase ? base : nil, local: local, downloaded: downloaded)
            let context = "run \(run): base \(base) known \(knowsBase), local \(local), downloaded \(downloaded)"
            var expectedDiscarded: [String] = []
            for property in properties {
                let sidesAgree = property.equal(local, downloaded)
                let localChanged = !knowsBase || !property.equal(local, base)
                let downloadedChanged = !knowsBase || !property.equal(downloaded, base)
                let merged = result.object
                if sidesAgree {
                    #expect(property.equal(merged, local), "\(property.name): \(context)")
                    if knowsBase && property.equal(local, base) { seen.unchanged += 1 } else { seen.sameChange += 1 }
                } else if localChanged && !downloadedChanged {
                    #expect(property.equal(merged, local), "\(property.name): \(context)")
                    seen.localOnly += 1
                } else if downloadedChanged && !localChanged {
                    #expect(property.equal(merged, downloaded), "\(property.name): \(context)")
                    seen.downloadedOnly += 1
                } else {
                    seen.conflicts += 1
                    let kept = winner(property.name) == .local ? local : downloaded
                    #expect(property.equal(merged, kept), "\(property.name): \(context)")
                    expectedDiscarded.append(property.name)
                }
                if knowsBase && property.equal(local, base) && property.equal(downloaded, base) {
                    #expect(property.equal(merged, base), "\(property.name) unchanged: \(context)")
                }
            }
            // In the merged document's order: local's members, then those only the server has (an
            // optional local set to nil, or never had), each in key order.
            let sorted = expectedDiscarded.sorted()
            let order = sorted.filter { Self.has(local, $0) } + sorted.filter { !Self.has(local, $0) }
            #expect(result.discarded == order, "\(context)")
        }
        #expect(seen.unchanged > 0 && seen.localOnly > 0 && seen.downloadedOnly > 0)
        #expect(seen.sameChange > 0 && seen.conflicts > 0)
    }

    /// Whether `record` encodes the property `name` (an optional set to nil is left out).
    static func has(_ record: FieldMergeRecord, _ name: String) -> Bool {
        name == "score" ? record.score != nil : name == "nickname" ? record.nickname != nil : true
    }
}
