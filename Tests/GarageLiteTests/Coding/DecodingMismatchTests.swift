import Foundation
import Testing
@testable import GarageLite

/// Rows that no longer match their type (after `migrateAll`): a `DecodingError` with the
/// path of the mismatch, and the row left readable as what it is.
@Suite("Coding: rows that no longer match their type")
struct DecodingMismatchTests {
    @Test func typeMismatchOnRetrieveThrowsDecodingError() throws {
        let garage = try TestEngine.garage()
        try garage.park(CodingOld(id: "x", value: "hello", extra: ["a"]))
        let moved = try garage.migrateAll(fromOldClassName: Identity.typeName(CodingOld.self), to: CodingNew.self)
        #expect(moved == 1)
        #expect(try garage.count(CodingOld.self) == 0)
        #expect(try garage.count(CodingNew.self) == 1)

        let error = try #require(throws: DecodingError.self) {
            try garage.retrieve(CodingNew.self, identifier: "x")
        }
        guard case .typeMismatch(let type, let context) = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(codingKeyNames(context.codingPath) == ["value"])

        #expect(throws: DecodingError.self) { try garage.retrieveAll(CodingNew.self) }

        // A mismatch inside an array element reports the element's path.
        try garage.migrateAll(fromOldClassName: Identity.typeName(CodingNew.self), to: CodingNewer.self)
        let nestedError = try #require(throws: DecodingError.self) {
            try garage.retrieve(CodingNewer.self, identifier: "x")
        }
        guard case .typeMismatch(_, let nestedContext) = nestedError else {
            Issue.record("expected typeMismatch, got \(nestedError)")
            return
        }
        #expect(codingKeyNames(nestedContext.codingPath) == ["extra", "Index 0"])
        #expect(nestedContext.codingPath.last?.intValue == 0)

        // The row is still there and readable as what it really is.
        try garage.migrateAll(fromOldClassName: Identity.typeName(CodingNewer.self), to: CodingOld.self)
        #expect(try garage.retrieve(CodingOld.self, identifier: "x")?.value == "hello")
    }

    @Test func containerKindMismatchThrowsDecodingError() throws {
        let garage = try TestEngine.garage()
        // A row holding a JSON string, read as a type that wants a keyed container.
        try garage.park(CodingColor.red)
        let identifier = try garage.identifier(for: CodingColor.red)
        try garage.migrateAll(fromOldClassName: Identity.typeName(CodingColor.self), to: CodingTagList.self)
        let error = try #require(throws: DecodingError.self) {
            try garage.retrieve(CodingTagList.self, identifier: identifier)
        }
        guard case .typeMismatch = error else {
            Issue.record("expected typeMismatch, got \(error)")
            return
        }
    }
}
