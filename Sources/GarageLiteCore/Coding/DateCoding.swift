import Foundation

/// How a garage decodes dates: its own default, recognised as such so that it can take a
/// fast path, or any of Foundation's strategies.
package enum DateDecoding: Sendable {
    case garageDefault
    case strategy(JSONDecoder.DateDecodingStrategy)

    package var strategy: JSONDecoder.DateDecodingStrategy {
        switch self {
        case .garageDefault: return DateCoding.defaultDecodingStrategy
        case .strategy(let strategy): return strategy
        }
    }
}

/// The garage's default date strategies, and the date formats GarageStorage wrote.
package enum DateCoding {
    /// Dates are written as their `timeIntervalSinceReferenceDate`, in the shortest text that
    /// reads back as the same `Double`: a date round-trips exactly.
    package static let defaultEncodingStrategy: JSONEncoder.DateEncodingStrategy = .deferredToDate

    /// Reads the default format, and also ISO 8601 strings, such as the
    /// `yyyy-MM-dd'T'HH:mm:ssZZZZZ` strings GarageStorage wrote.
    package static let defaultDecodingStrategy: JSONDecoder.DateDecodingStrategy = .custom(decodeDefault)

    @Sendable
    package static func decodeDefault(_ decoder: any Decoder) throws -> Date {
        let container = try decoder.singleValueContainer()
        if let seconds = try? container.decode(Double.self) {
            return Date(timeIntervalSinceReferenceDate: seconds)
        }
        return try decodeDefault(string: try container.decode(String.self), codingPath: container.codingPath)
    }

    /// The default strategy for a date written as a string.
    package static func decodeDefault(string text: String, codingPath: @autoclosure () -> [any CodingKey]) throws -> Date {
        if let date = parseISO8601(text) {
            return date
        }
        throw DecodingError.dataCorrupted(.init(
            codingPath: codingPath(),
            debugDescription: "Expected a date, as seconds since 2001-01-01 or an ISO 8601 string "
                + "such as 2019-10-03T12:34:56Z, but found \"\(text)\"."))
    }

    package static func parseISO8601(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }

    /// Encodes a date with Foundation's `JSONEncoder`, for strategies the garage's encoder
    /// does not implement itself.
    package static func encodeWithFoundation(_ date: Date, strategy: JSONEncoder.DateEncodingStrategy,
                                     codingPath: [any CodingKey]) throws -> JSONValue {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = strategy
        guard case .array(let values) = try JSONReader.parse(try encoder.encode([date])), let value = values.first else {
            throw EncodingError.invalidValue(date, .init(
                codingPath: codingPath, debugDescription: "The date encoding strategy produced no value."))
        }
        return value
    }

    /// Decodes a date with Foundation's `JSONDecoder`, for strategies the garage's decoder
    /// does not implement itself.
    package static func decodeWithFoundation(_ value: JSONValue, strategy: JSONDecoder.DateDecodingStrategy,
                                     codingPath: [any CodingKey]) throws -> Date {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = strategy
        do {
            return try decoder.decode([Date].self, from: Data(JSONWriter.bytes(from: .array([value])))).first
                ?? Date(timeIntervalSinceReferenceDate: 0)
        } catch DecodingError.dataCorrupted(let context) {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath, debugDescription: context.debugDescription, underlyingError: context.underlyingError))
        }
    }
}
