import Foundation

// Models of the coding tests (Tests/GarageLiteTests/Coding/): dates, Foundation scalars,
// integers and floating-point numbers, and types that a row no longer matches.

// MARK: - Dates

/// Dates in a property, an array and an optional, for the date strategies.
struct CodingEvent: Codable, Identifiable, Equatable {
    var id: String
    var when: Date
    var history: [Date] = []
    var maybe: Date? = nil
}

// MARK: - Foundation scalars

/// The Foundation scalars with a JSON form of their own: `Data`, `URL`, `Decimal`, `UUID`.
struct CodingScalars: Codable, Identifiable, Equatable {
    var id: UUID
    var data: Data
    var emptyData: Data
    var url: URL
    var fileURL: URL
    var decimal: Decimal
    var negativeDecimal: Decimal
    var decimals: [Decimal]
    var uuid: UUID
    var optionalData: Data?
    var optionalURL: URL?
    var optionalDecimal: Decimal?
    var missingUUID: UUID?
}

/// A `Decimal`, whose NaN is refused.
struct CodingDecimalBox: Codable, Identifiable {
    var id: String
    var value: Decimal
}

// MARK: - Integers

/// The extremes of each integer width, in properties, an array and a dictionary.
struct CodingExtremes: Codable, Identifiable, Equatable {
    var id: String
    var int64Min: Int64
    var int64Max: Int64
    var uint64Max: UInt64
    var intMin: Int
    var int8Min: Int8
    var uint8Max: UInt8
    var int32Min: Int32
    var uint32Max: UInt32
    var list: [UInt64]
    var byName: [String: Int64]
}

/// Writes the extremes through every kind of container, with the non-generic overloads.
struct CodingContainerIntegers: Codable, Identifiable, Equatable {
    var id: String
    var keyed: UInt64
    var unkeyed: Int64
    var single: CodingBigCount

    enum CodingKeys: String, CodingKey { case id, keyed, unkeyed, single }

    init(id: String, keyed: UInt64, unkeyed: Int64, single: CodingBigCount) {
        self.id = id; self.keyed = keyed; self.unkeyed = unkeyed; self.single = single
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(keyed, forKey: .keyed)
        var list = container.nestedUnkeyedContainer(forKey: .unkeyed)
        try list.encode(unkeyed)
        try container.encode(single, forKey: .single)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        keyed = try container.decode(UInt64.self, forKey: .keyed)
        var list = try container.nestedUnkeyedContainer(forKey: .unkeyed)
        unkeyed = try list.decode(Int64.self)
        single = try container.decode(CodingBigCount.self, forKey: .single)
    }
}

/// A `UInt64` written with a single-value container.
struct CodingBigCount: Codable, Equatable {
    var value: UInt64
    init(_ value: UInt64) { self.value = value }
    init(from decoder: any Decoder) throws { value = try decoder.singleValueContainer().decode(UInt64.self) }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// An `Int64`: too small for what a `CodingBig` holds.
struct CodingSmall: Codable, Identifiable {
    var id: String
    var value: Int64
}

/// A `UInt64`, migrated to `CodingSmall` to make it overflow.
struct CodingBig: Codable, Identifiable {
    var id: String
    var value: UInt64
}

// MARK: - Non-finite numbers

/// A `Double`; identifiable, so a row of its own when nested.
struct CodingMeasurement: Codable, Identifiable {
    var id: String
    var value: Double
}

/// A `Float`.
struct CodingFloatMeasurement: Codable, Identifiable {
    var id: String
    var value: Float
}

/// `Double`s in an array (an unkeyed container).
struct CodingSeries: Codable, Identifiable {
    var id: String
    var values: [Double]
}

/// A `Double` inside a value written with a single-value container.
struct CodingWrappedTemperature: Codable, Identifiable {
    var id: String
    var temperature: CodingCelsius
}

/// A sensor and a measurement, both references: rows of their own.
struct CodingReading: Codable, Identifiable {
    var id: String
    var sensor: CodingPerson
    var measurement: CodingMeasurement   // Identifiable: its own row
}

// MARK: - Type mismatch after migration

/// `value` as a `String`: the shape a row is written in.
struct CodingOld: Codable, Identifiable {
    var id: String
    var value: String
    var extra: [String]
}

/// `value` as an `Int`: a type the row no longer matches.
struct CodingNew: Codable, Identifiable {
    var id: String
    var value: Int
    var extra: [String]
}

/// `extra` as `[Int]`: a mismatch inside an array.
struct CodingNewer: Codable, Identifiable {
    var id: String
    var value: String
    var extra: [Int]
}
