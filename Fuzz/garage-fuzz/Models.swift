import Foundation
import GarageLite

// The model shapes the fuzzed rows are decoded as: references (an identifiable child, an array
// and a dictionary of them, an optional one), a class, renamed keys and defaults
// (`LegacyKeyed`, `@Default`), protocol-typed values (`@Polymorphic`), an enum with payloads,
// dates, and GarageStorage's shapes (Fixtures/models, `FixtureGarageStorage.Relative`).

struct FuzzChild: Codable, Identifiable, Hashable {
    var id: String
    var name: String
    var score: Double?
    var tags: [String]
}

final class FuzzParent: Codable, Identifiable {
    var id: String
    var title: String
    var created: Date
    var favorite: FuzzChild?
    var children: [FuzzChild]
    var byName: [String: FuzzChild]
    var counts: [String: Int]
    var shape: FuzzShape

    init(id: String) {
        self.id = id
        title = "parent \(id)"
        created = Date(timeIntervalSince1970: 1_700_000_000)
        let children = (0..<2).map { FuzzChild(id: "c\($0)", name: "child \($0)", score: Double($0) / 3, tags: ["a", "b"]) }
        favorite = children[0]
        self.children = children
        byName = ["first": children[0]]
        counts = ["x": 1]
        shape = .circle(radius: 2.5)
    }
}

enum FuzzShape: Codable {
    case circle(radius: Double)
    case rectangle(width: Int, height: Int)
    case none
}

protocol FuzzPet: Codable { var name: String { get } }
struct FuzzDog: FuzzPet { var name: String; var barks: Bool }
struct FuzzCat: FuzzPet { var name: String; var lives: Int }

struct FuzzContact: Codable, Identifiable, LegacyKeyed {
    static let legacyKeys = ["fullName": ["name"]]
    var id: String
    var fullName: String
    @Default<FalseByDefault> var isFavorite: Bool
    @Polymorphic var pets: [any FuzzPet]
    var owner: FuzzChild?
}
