import Foundation
import GarageLiteCore

/// The row of a setting: `{"value": …}` under the type name `GarageLite.Setting` and the
/// key's id. Every value type shares the name, so a key's id names one row whatever its type.
protocol StoredSettingValue: Codable, Sendable, StoredTypeNamed {
    /// The same row, parked only where no setting is stored (see ``FirstStoredSetting``).
    var first: any Encodable & Sendable { get }
}

/// The type name of every setting's row.
let storedSettingTypeName = "GarageLite.Setting"

/// A setting's row holding a `Stored` value (the key's value, or its transformer's output).
///
/// The value is always written, `null` included, and must be read back: a row whose JSON has
/// no value is a mismatch, not a `nil`.
struct StoredSetting<Stored: Codable & Sendable>: StoredSettingValue {
    static var storedTypeName: String { storedSettingTypeName }
    static var sharesStoredTypeName: Bool { true }

    var value: Stored

    init(_ value: Stored) {
        self.value = value
    }

    private enum CodingKeys: String, CodingKey {
        case value
    }

    init(from decoder: any Decoder) throws {
        value = try decoder.container(keyedBy: CodingKeys.self).decode(Stored.self, forKey: .value)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
    }

    var first: any Encodable & Sendable {
        FirstStoredSetting(value: value)
    }
}

/// A setting's row that the garage writes only where none is stored: a ``Revisioned`` value of
/// revision 0, which a park refuses over a stored row, in the transaction that writes. How a
/// default is persisted once, even by two garages or processes at the same time.
struct FirstStoredSetting<Stored: Codable & Sendable>: Encodable, Sendable, Revisioned, StoredTypeNamed {
    static var storedTypeName: String { storedSettingTypeName }
    static var sharesStoredTypeName: Bool { true }

    var value: Stored
    var revision: Int64 = 0

    private enum CodingKeys: String, CodingKey {
        case value
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
    }
}

/// A setting's row read and written with its revision: how ``Garage/updateValue(for:_:)-3gyy0``
/// reads a value and writes the next one only if no one wrote the row in between.
protocol RevisionedSettingValue: Codable, Sendable, Revisioned, StoredTypeNamed {
    /// The value stored (the key's value, or its transformer's output).
    var storedValue: any Sendable { get }
}

/// A setting's row holding a `Stored` value, with the row's revision (see
/// ``RevisionedSettingValue``). Its JSON is a ``StoredSetting``'s.
struct RevisionedSetting<Stored: Codable & Sendable>: RevisionedSettingValue {
    static var storedTypeName: String { storedSettingTypeName }
    static var sharesStoredTypeName: Bool { true }

    var value: Stored
    var revision: Int64

    init(value: Stored, revision: Int64) {
        self.value = value
        self.revision = revision
    }

    var storedValue: any Sendable { value }

    private enum CodingKeys: String, CodingKey {
        case value
    }

    init(from decoder: any Decoder) throws {
        value = try decoder.container(keyedBy: CodingKeys.self).decode(Stored.self, forKey: .value)
        revision = 0 // the row's, set by the garage
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(value, forKey: .value)
    }
}
