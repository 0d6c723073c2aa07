import Foundation
import Testing
@testable import GarageLite

// A renamed type read through a read-only SQLite file, which stays as it was. Moved from
// Records/ModelChangeTests.swift (issue 45).

extension RenamingTests {
    @Test func aReadOnlyGarageReadsARenamedTypeUnderItsFormerNameLazily() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ward.sqlite")
        do {
            let old = try Garage(path: path)   // its file is read below
            try await old.park(MWard(id: "w1", patients: [MPatient(id: "p1", name: "Ada"), MPatient(id: "p2", name: "Alan")]))
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        // The synchronous calls (an async test would pick the async overloads).
        try {
            let garage = try Garage.readOnly(path: path)
            #expect(try garage.register(MClient.self, formerTypeNames: ["MPatient"]) == 2)
            #expect(try garage.retrieve(MClient.self, identifier: "p1")?.name == "Ada")
            #expect(try garage.retrieveAll(MClient.self).map(\.name) == ["Ada", "Alan"])
            #expect(try garage.count(MClient.self) == 2)
            #expect(try garage.retrieve(MWardV2.self, identifier: "w1")?.patients.map(\.name) == ["Ada", "Alan"])
            #expect(try garage.referrers(of: MClient(id: "p2", name: "Alan")).map(\.identifier) == ["w1"])
            // Nothing to save, nothing written: the file keeps the former name.
            #expect(!garage.hasUnsavedChanges)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            let writable = try Garage(path: path)
            #expect(try writable.count(MPatient.self) == 2)
        }()
        // The async variant reads through the same way.
        let other = try Garage.readOnly(path: path)
        #expect(try await other.register(MClient.self, formerTypeNames: ["MPatient"]) == 2)
        #expect(try await other.retrieve(MClient.self, identifier: "p2")?.name == "Alan")
    }
}
