import Foundation
import Testing
@testable import GarageLite

@Suite struct CodingTests {
    @Test func placeholder() throws {
        _ = try Garage.inMemory()
    }
}
