import Foundation
@testable import GarageLitePostgres
import GarageLite
import PostgresNIO
import Testing

/// What a `postgres://` URL says beside the server: parsed without one.
@Suite("PostgreSQL URLs", .firstPassOnly)
struct PostgresURLTests {
    /// `connect_timeout`, libpq's name, sets how long a connection may take to be made; without
    /// it, postgres-nio's 10 seconds. Anything but a positive number of seconds is refused,
    /// naming the item, and the error shows no password.
    @Test func connectTimeoutIsTheSecondsAConnectionMayTake() throws {
        let (configuration, schema) = try PostgresURL.parse("postgres://app@db.internal/app?schema=notes&connect_timeout=45&sslmode=disable")
        #expect(configuration.options.connectTimeout == .seconds(45))
        #expect(schema == "notes")
        let (defaulted, _) = try PostgresURL.parse("postgres://app@db.internal/app?sslmode=disable")
        #expect(defaulted.options.connectTimeout == .seconds(10))
        for bad in ["0", "-3", "ten", "", "1.5"] {
            let error = try #require(throws: GarageError.self) {
                try PostgresURL.parse("postgres://app:hunter2@db.internal/app?sslmode=disable&connect_timeout=\(bad)")
            }
            #expect("\(error)".contains("connect_timeout"), "\(error)")
            #expect(!"\(error)".contains("hunter2"), "\(error)")
        }
    }
}
