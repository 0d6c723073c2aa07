import Foundation
@testable import GarageLite
import Testing

// A SwiftLocal-style hierarchy: people who are students or teachers, stored as `[HPerson]`.

class HPerson: Codable, @unchecked Sendable {
    var firstName: String
    var lastName: String

    init(firstName: String, lastName: String) {
        self.firstName = firstName
        self.lastName = lastName
    }
}

final class HHomework: Codable, Equatable, @unchecked Sendable {
    let answers: String
    var grade: Int?

    init(answers: String, grade: Int?) {
        self.answers = answers
        self.grade = grade
    }

    static func == (lhs: HHomework, rhs: HHomework) -> Bool { lhs.answers == rhs.answers && lhs.grade == rhs.grade }
}

final class HTeacher: HPerson, @unchecked Sendable {
    var salary: Double

    init(firstName: String, lastName: String, salary: Double) {
        self.salary = salary
        super.init(firstName: firstName, lastName: lastName)
    }

    private enum CodingKeys: String, CodingKey { case salary }

    required init(from decoder: any Decoder) throws {
        salary = try decoder.container(keyedBy: CodingKeys.self).decode(Double.self, forKey: .salary)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(salary, forKey: .salary)
    }
}

final class HStudent: HPerson, @unchecked Sendable {
    var debt: Double
    var teacher: HTeacher
    var subjectNames: [String]
    var homework: [HHomework] = []

    init(firstName: String, lastName: String, debt: Double, teacher: HTeacher, subjectNames: [String]) {
        self.debt = debt
        self.teacher = teacher
        self.subjectNames = subjectNames
        super.init(firstName: firstName, lastName: lastName)
    }

    private enum CodingKeys: String, CodingKey { case debt, teacher, subjectNames, homework }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        debt = try container.decode(Double.self, forKey: .debt)
        teacher = try container.decode(HTeacher.self, forKey: .teacher)
        subjectNames = try container.decode([String].self, forKey: .subjectNames)
        homework = try container.decode([HHomework].self, forKey: .homework)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(debt, forKey: .debt)
        try container.encode(teacher, forKey: .teacher)
        try container.encode(subjectNames, forKey: .subjectNames)
        try container.encode(homework, forKey: .homework)
    }
}

struct HSchool: Codable, Identifiable {
    var id: String
    var people: [HPerson]
    var principal: HPerson?
}

// The same, behind references: every person is an object of its own.

class RPerson: Codable, Identifiable, @unchecked Sendable {
    let id: String
    var name: String

    init(id: String, name: String) {
        self.id = id
        self.name = name
    }
}

final class RStudent: RPerson, @unchecked Sendable {
    var grade: Int

    init(id: String, name: String, grade: Int) {
        self.grade = grade
        super.init(id: id, name: name)
    }

    private enum CodingKeys: String, CodingKey { case grade }

    required init(from decoder: any Decoder) throws {
        grade = try decoder.container(keyedBy: CodingKeys.self).decode(Int.self, forKey: .grade)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(grade, forKey: .grade)
    }
}

final class RTeacher: RPerson, @unchecked Sendable {
    var subject: String

    init(id: String, name: String, subject: String) {
        self.subject = subject
        super.init(id: id, name: name)
    }

    private enum CodingKeys: String, CodingKey { case subject }

    required init(from decoder: any Decoder) throws {
        subject = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .subject)
        try super.init(from: decoder)
    }

    override func encode(to encoder: any Encoder) throws {
        try super.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(subject, forKey: .subject)
    }
}

struct RClassroom: Codable, Identifiable {
    var id: String
    var people: [RPerson]
    var head: RPerson
}

/// Issue 13: class hierarchies read back as the subclasses they were parked as.
@Suite("Class hierarchies")
struct HierarchyTests {
    private func school() -> HSchool {
        let teacher = HTeacher(firstName: "Ada", lastName: "Byron", salary: 52_000)
        let student = HStudent(firstName: "Alan", lastName: "Turing", debt: 120.5, teacher: teacher,
                               subjectNames: ["Maths", "Logic"])
        student.homework = [HHomework(answers: "42", grade: 7), HHomework(answers: "?", grade: nil)]
        return HSchool(id: "s1", people: [student, teacher, HPerson(firstName: "Grace", lastName: "Hopper")],
                       principal: teacher)
    }

    @Test func studentsAndTeachersRoundTripInline() throws {
        let garage = try TestEngine.garage()
        try garage.register(HStudent.self, HTeacher.self)
        try garage.park(school())
        let school = try #require(try garage.retrieve(HSchool.self, identifier: "s1"))
        #expect(school.people.count == 3)
        let student = try #require(school.people[0] as? HStudent)
        #expect(student.firstName == "Alan" && student.lastName == "Turing" && student.debt == 120.5)
        #expect(student.subjectNames == ["Maths", "Logic"] && student.teacher.salary == 52_000)
        #expect(student.homework == [HHomework(answers: "42", grade: 7), HHomework(answers: "?", grade: nil)])
        let teacher = try #require(school.people[1] as? HTeacher)
        #expect(teacher.firstName == "Ada" && teacher.salary == 52_000)
        #expect(type(of: school.people[2]) == HPerson.self && school.people[2].firstName == "Grace")
        #expect(school.principal is HTeacher)
        // The subclass's name is stored beside its value; a plain person and the student's
        // teacher (declared HTeacher) carry none.
        let json = try codingStoredJSON(garage, HSchool.self, "s1")
        #expect(json.contains(#""@type":"HStudent""#) && json.contains(#""@type":"HTeacher""#))
        #expect(!json.contains(#""@type":"HPerson""#))
        #expect(try garage.check().isOK)
    }

    @Test func anUnregisteredSubclassIsRefusedAtParkNamingIt() throws {
        let garage = try TestEngine.garage()
        try garage.register(HTeacher.self)
        #expect {
            try garage.park(school())
        } throws: { error in
            guard case GarageError.unregisteredType(let type, let declared) = error else { return false }
            return type.hasSuffix("HStudent") && declared.hasSuffix("HPerson")
                && "\(error)".contains("garage.register(HStudent.self)")
        }
        #expect(try garage.count() == 0)
    }

    @Test func aGarageThatDidNotRegisterTheTypeNamesItOnRetrieve() async throws {
        let directory = try TemporaryDirectory()
        let writer = try TestEngine.garage(path: directory.path("school.sqlite"))
        try writer.register(HStudent.self, HTeacher.self)
        try await writer.park(school())
        try await writer.park(HSchool(id: "s2", people: [HPerson(firstName: "Only", lastName: "People")]))
        let reader = try TestEngine.garage(path: directory.path("school.sqlite"))
        #expect {
            _ = try reader.retrieve(HSchool.self, identifier: "s1")
        } throws: { error in
            "\(error)".contains("HStudent") && "\(error)".contains("garage.register(HStudent.self)")
                && "\(error)".contains("HSchool(s1)")
        }
        let lossy = try await reader.retrieveAllLossy(HSchool.self)
        #expect(lossy.objects.map(\.id) == ["s2"] && lossy.failures.map(\.identifier) == ["s1"])
        try await reader.register(HStudent.self, HTeacher.self)
        #expect(try await reader.retrieve(HSchool.self, identifier: "s1")?.people.first is HStudent)
    }

    @Test func subclassesBehindReferencesAreObjectsOfTheirClass() async throws {
        let garage = try TestEngine.garage()
        try garage.register(RStudent.self, RTeacher.self)
        let teacher = RTeacher(id: "t1", name: "Ada", subject: "Maths")
        let classroom = RClassroom(id: "c1", people: [RStudent(id: "p1", name: "Alan", grade: 9), teacher,
                                                      RPerson(id: "p2", name: "Visitor")], head: teacher)
        try await garage.park(classroom)
        // Each person is a row of RPerson, the type they are declared as.
        #expect(try await garage.identifiers(of: RPerson.self) == ["p1", "p2", "t1"])
        // Counted and listed with their class: asked of the subclass, that is an error.
        await #expect(throws: GarageError.storedAsItsClass(typeName: "RStudent", className: "RPerson", operation: "count")) {
            try await garage.count(RStudent.self)
        }
        #expect(throws: GarageError.self) { try garage.retrieveAll(RStudent.self) }
        let people = try await garage.retrieveAll(RPerson.self)
        #expect(people.compactMap { $0 as? RStudent }.map(\.grade) == [9])
        #expect(people.compactMap { $0 as? RTeacher }.map(\.subject) == ["Maths"])
        let read = try #require(try await garage.retrieve(RClassroom.self, identifier: "c1"))
        #expect(read.people[0] is RStudent && read.people[1] is RTeacher && type(of: read.people[2]) == RPerson.self)
        #expect(read.head === read.people[1]) // one object, however often referenced
        #expect(try await garage.retrieve(RPerson.self, identifier: "p1") is RStudent)
        #expect(try await garage.check().isOK)
        // Parked on its own as its class, a student is still a student.
        try await garage.park(RStudent(id: "p3", name: "Emmy", grade: 11) as RPerson)
        #expect((try await garage.retrieve(RPerson.self, identifier: "p3") as? RStudent)?.grade == 11)
        // Parked as itself, it is the same row: the classroom sees the change.
        let alan = try #require(read.people[0] as? RStudent)
        alan.grade = 10
        try await garage.park(alan)
        #expect((try await garage.retrieve(RClassroom.self, identifier: "c1")?.people[0] as? RStudent)?.grade == 10)
        #expect(try await garage.retrieve(RStudent.self, identifier: "p1")?.grade == 10)
        #expect(try await garage.identifiers(of: RPerson.self) == ["p1", "p2", "p3", "t1"])
        // Retrieved as a subclass it isn't, it is an error naming both.
        #expect { _ = try garage.retrieve(RStudent.self, identifier: "t1") } throws: { error in
            "\(error)".contains("RTeacher") && "\(error)".contains("RStudent")
        }
        try await garage.delete(alan, rule: .nullify(in: RClassroom.self))
        #expect(try await garage.identifiers(of: RPerson.self) == ["p2", "p3", "t1"])
        #expect(try await garage.check().isOK)
    }

    @Test func aSubclassThatHasItsClasssStoredNameIsRefused() throws {
        let garage = try TestEngine.garage()
        #expect {
            try garage.register(HNamedCar.self)
        } throws: { error in
            guard case GarageError.cannotRegister(let type, let reason) = error else { return false }
            return type.hasSuffix("HNamedCar") && reason.contains("class var storedTypeName")
        }
        // The class keeps its name.
        try garage.park(HNamedVehicle(wheels: 2), identifier: "bike")
        #expect(try garage.retrieve(HNamedVehicle.self, identifier: "bike")?.wheels == 2)
    }

    @Test func aRenamedSubclassReadsUnderItsFormerName() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("renamed.sqlite")
        do {
            let old = try TestEngine.garage(path: path)
            try old.register(HPupil.self)
            try old.park(HSchool(id: "s1", people: [HPupil(firstName: "Ann", lastName: "Lee")]))
        }
        let garage = try TestEngine.garage(path: path)
        #expect(try garage.register(HLearner.self, formerTypeNames: ["HPupilOld"]) == 0)
        let school = try #require(try garage.retrieve(HSchool.self, identifier: "s1"))
        #expect((school.people[0] as? HLearner)?.firstName == "Ann")
    }
}

/// A class that declares its stored name, and a subclass that inherits it.
class HNamedVehicle: Codable, StoredTypeNamed, @unchecked Sendable {
    static let storedTypeName = "HNamedVehicle"
    var wheels: Int
    init(wheels: Int) { self.wheels = wheels }
}

final class HNamedCar: HNamedVehicle, @unchecked Sendable {}

/// A subclass as an older version of the app named it (stored as "HPupilOld"), and as it is
/// named now.
final class HPupil: HPerson, StoredTypeNamed, @unchecked Sendable {
    static let storedTypeName = "HPupilOld"
    static let sharesStoredTypeName = true
}

final class HLearner: HPerson, @unchecked Sendable {
}
