import Foundation
@testable import GarageLite
import Testing

/// Issue 28: dates as operands — compared and sorted as the garage writes them, with an index
/// or without, with the default encoding (numbers) and with ISO 8601 strings.
@Suite("Queries by date")
struct QueryDateTests {
    struct Task: Codable, Identifiable, Sendable, Hashable {
        var id: String
        var due: Date?
        var created: Date
    }

    static let start = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static func tasks() -> [Task] {
        (0..<30).map { index in
            let dueDays = Double((index * 7) % 30)
            let due: Date? = index % 5 == 0 ? nil : start.addingTimeInterval(dueDays * 86_400)
            return Task(id: String(format: "t%02d", index), due: due, created: start.addingTimeInterval(Double(index) * 3_600))
        }
    }

    static func expected(_ tasks: [Task], before date: Date) -> [String] {
        tasks.filter { ($0.due ?? .distantFuture) < date }.sorted { ($0.due!, $0.id) < ($1.due!, $1.id) }.map(\.id)
    }

    @Test(arguments: [false, true], [false, true])
    func datesCompareAndSortInTimeOrder(iso8601: Bool, indexed: Bool) throws {
        let garage = try TestEngine.garage()
        if iso8601 { garage.dateEncodingStrategy = .iso8601 }
        if indexed { try garage.index(Task.self, on: Field("due")) }
        let tasks = Self.tasks()
        try garage.parkAll(tasks)

        let cutoff = Self.start.addingTimeInterval(10 * 86_400)
        let dueSoon = Query(Task.self).filter(Field("due") < cutoff).sorted(by: Field("due"))
        #expect(try garage.identifiers(dueSoon) == Self.expected(tasks, before: cutoff))
        #expect(try garage.count(dueSoon) == Self.expected(tasks, before: cutoff).count)

        let window = Query(Task.self).filter(Field("created").isBetween(Self.start.addingTimeInterval(3_600),
                                                                         and: Self.start.addingTimeInterval(3 * 3_600)))
        #expect(try garage.identifiers(window) == ["t01", "t02", "t03"])
        #expect(try garage.identifiers(Query(Task.self).filter(Field("due") == nil)) == ["t00", "t05", "t10", "t15", "t20", "t25"])
        let latest = try garage.retrieve(Query(Task.self).filter(Field("due") != nil).sorted(by: Field("due"), .descending).limit(1))
        #expect(latest.first?.due == tasks.compactMap(\.due).max())
    }

    @Test func aDateComparedWithAPropertyOfAnotherKindIsRefused() throws {
        struct Named: Codable, Identifiable { var id: String; var name: String }
        let garage = try TestEngine.garage()
        #expect(throws: GarageError.self) { try garage.count(Query(Named.self).filter(Field("name") < Date())) }
        // A string compared with dates written as numbers could match nothing: refused.
        let error = try #require(throws: GarageError.self) { try garage.count(Query(Task.self).filter(Field("due") < "2026-12-01")) }
        #expect("\(error)".contains("compare it with a Date"), "\(error)")
        // Written as ISO 8601 strings, dates compare with strings.
        garage.dateEncodingStrategy = .iso8601
        try garage.park(Task(id: "t", due: Date(timeIntervalSince1970: 1_800_000_000), created: Date()))
        #expect(try garage.count(Query(Task.self).filter(Field("due") > "2026-12-01")) == 1)
    }
}
