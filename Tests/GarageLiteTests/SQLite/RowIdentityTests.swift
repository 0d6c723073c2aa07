import Foundation
@testable import GarageLite
import Testing

/// Issue 14: a row's content is checked against the row's identity when it is read.
@Suite("Row identity", .firstPassOnly)
struct RowIdentityTests {
    @Test func aRowHoldingAnotherObjectsContentIsCorruptNamingBoth() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garage.sqlite")
        let garage = try Garage(path: path)
        try garage.parkAll((1...3).map { Counter(id: $0, value: $0 * 10) })
        // Counter 1's JSON copied into Counter 2's row.
        try rawWrite(path, """
            UPDATE garage_object SET data = (SELECT data FROM garage_object WHERE type = 'Counter' AND identifier = '1')
            WHERE type = 'Counter' AND identifier = '2'
            """)
        #expect(throws: GarageError.corruptData(
            typeName: "Counter", identifier: "2",
            reason: "it holds the object with identifier 1, not 2: its content was copied or moved from another object's "
                + "row. Park Counter(2) again, or delete it")) {
            try garage.retrieve(Counter.self, identifier: 2)
        }
        let lossy = try garage.retrieveAllLossy(Counter.self)
        #expect(lossy.objects.map(\.id) == [1, 3] && lossy.failures.map(\.identifier) == ["2"])
        #expect(try garage.retrieve(Counter.self, identifier: 3)?.value == 30)
    }
}
