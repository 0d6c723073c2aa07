import Foundation
import Testing
import GarageLite

/// Issue 25: identifier order is stated, not left to the engine: the order of the identifiers'
/// UTF-8 bytes, for every read that lists objects in identifier order.
@Suite("Identifier order")
struct IdentifierOrderTests {
    struct Ordered: Codable, Identifiable, Sendable {
        var id: String
    }

    static let identifiers = ["é", "a", "B", "10", "9", "Z", "ab", "a b", "\u{1F600}", "ä"]

    /// The order the garage promises: bytewise.
    static let bytewise = identifiers.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }

    @Test func everyListingIsInTheOrderOfTheIdentifiersBytes() async throws {
        let garage = try TestEngine.garage()
        try await garage.parkAll(Self.identifiers.shuffled().map(Ordered.init))
        #expect(Self.bytewise == ["10", "9", "B", "Z", "a", "a b", "ab", "ä", "é", "\u{1F600}"])
        #expect(try await garage.identifiers(of: Ordered.self) == Self.bytewise)
        #expect(try await garage.retrieveAll(Ordered.self).map(\.id) == Self.bytewise)
        var visited: [String] = []
        try await garage.forEach(Ordered.self, batchSize: 3) { visited.append($0.id) }
        #expect(visited == Self.bytewise)
    }
}
