import Foundation

// Models of the coding tests (Tests/GarageLiteTests/Coding/): class hierarchies and values
// written through super encoders.

/// A base class its subclasses encode through a super encoder; its owner is a reference.
class CodingVehicle: Codable, Identifiable {
    var id: String
    var wheels: Int
    var owner: CodingPerson?

    init(id: String, wheels: Int, owner: CodingPerson?) {
        self.id = id
        self.wheels = wheels
        self.owner = owner
    }
}

/// Encodes its superclass under the default "super" key.
final class CodingCar: CodingVehicle {
    var brand: String

    enum CodingKeys: String, CodingKey { case brand }

    init(id: String, wheels: Int, owner: CodingPerson?, brand: String) {
        self.brand = brand
        super.init(id: id, wheels: wheels, owner: owner)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        brand = try container.decode(String.self, forKey: .brand)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(brand, forKey: .brand)
        try super.encode(to: container.superEncoder())
    }
}

/// Encodes its superclass under a key of its own.
final class CodingTruck: CodingVehicle {
    var payload: Double

    enum CodingKeys: String, CodingKey { case payload, vehicle }

    init(id: String, wheels: Int, owner: CodingPerson?, payload: Double) {
        self.payload = payload
        super.init(id: id, wheels: wheels, owner: owner)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        payload = try container.decode(Double.self, forKey: .payload)
        try super.init(from: container.superDecoder(forKey: .vehicle))
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(payload, forKey: .payload)
        try super.encode(to: container.superEncoder(forKey: .vehicle))
    }
}

/// Encodes a superclass-like part through an unkeyed container's `superEncoder()`.
struct CodingUnkeyedSuper: Codable, Identifiable, Equatable {
    var id: String
    var base: CodingPerson   // written inline through superEncoder, not as a reference

    enum BaseKeys: String, CodingKey { case id, name }

    init(id: String, base: CodingPerson) { self.id = id; self.base = base }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        id = try container.decode(String.self)
        let superDecoder = try container.superDecoder()
        let keyed = try superDecoder.container(keyedBy: BaseKeys.self)
        base = CodingPerson(id: try keyed.decode(String.self, forKey: .id),
                            name: try keyed.decode(String.self, forKey: .name))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(id)
        let superEncoder = container.superEncoder()
        var keyed = superEncoder.container(keyedBy: BaseKeys.self)
        try keyed.encode(base.id, forKey: .id)
        try keyed.encode(base.name, forKey: .name)
    }
}

// MARK: - A super encoder nothing is written into

/// Hands out a super encoder (keyed and unkeyed) and writes nothing into it, as a base class
/// with an empty `encode(to:)` does; its decoding asks for a keyed container there.
/// `JSONEncoder` writes `{}` for such an encoder, so `JSONDecoder` reads it back.
struct CodingSilentSuper: Codable, Identifiable, Equatable {
    var id: String
    var list: [String]

    enum CodingKeys: String, CodingKey { case id, list }
    enum NoKeys: CodingKey {}

    init(id: String, list: [String]) { self.id = id; self.list = list }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        _ = container.superEncoder()
        var unkeyed = container.nestedUnkeyedContainer(forKey: .list)
        for item in list { try unkeyed.encode(item) }
        _ = unkeyed.superEncoder()
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        _ = try container.superDecoder().container(keyedBy: NoKeys.self)
        var unkeyed = try container.nestedUnkeyedContainer(forKey: .list)
        var list: [String] = []
        while unkeyed.count.map({ unkeyed.currentIndex < $0 - 1 }) ?? false {
            list.append(try unkeyed.decode(String.self))
        }
        _ = try unkeyed.superDecoder().container(keyedBy: NoKeys.self)
        self.list = list
    }
}
