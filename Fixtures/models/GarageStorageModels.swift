import Foundation
import GarageLite

/// The models of the GarageStorage stores in `Fixtures/garagestorage/`, as a GarageStorage
/// app declared them (classes with `Mappable` identity, `Hashable` values, `Syncable`), and
/// as the app keeps using them with GarageLite after the import. Stored under their short names.
public enum FixtureGarageStorage {
    /// A person with a brother (a reference), siblings (an array of references, empty ones
    /// omitted by GarageStorage), a birthdate (GarageStorage's ISO string, or the Objective-C
    /// transformable date), an address (a plain value, or the Objective-C anonymous object).
    public final class Relative: Mappable, Syncable {
        public var id: String { name }
        public var name: String
        public var age: Int
        public var birthdate: Date?
        public var brother: Relative?
        public var siblings: [Relative]
        @Migratable public var address: Residence?
        public var syncStatus: SyncStatus = .undetermined

        enum CodingKeys: String, CodingKey {
            case name, age, birthdate, brother, siblings, address
        }

        public init(name: String, age: Int, siblings: [Relative] = []) {
            self.name = name
            self.age = age
            self.siblings = siblings
        }
    }

    public struct Residence: Codable, Hashable, Sendable {
        public var street: String
        public var city: String

        public init(street: String, city: String) {
            self.street = street
            self.city = city
        }
    }

    /// Encrypted by the app's delegate (`FixtureV1.encryptionKey`).
    public struct Diary: Codable, Identifiable, Sendable {
        public var id: String
        public var text: String

        public init(id: String, text: String) {
            self.id = id
            self.text = text
        }
    }

    /// `Hashable`, not `Identifiable`: GarageStorage stored it under its `hashValue`.
    public struct Badge: Codable, Hashable, Sendable {
        public var label: String

        public init(label: String) {
            self.label = label
        }
    }
}
