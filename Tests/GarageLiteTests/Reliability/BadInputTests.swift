import Foundation
import Testing
@testable import GarageLite

// Bad input, from issue 5: each case gets a clear `GarageError` (or `DecodingError`) that names
// the type, identifier or path and says what to do; nothing crashes; nothing partial is
// written; and every other object stays readable.

@Suite("Bad input: rows")
struct BadRowTests {
    @Test func aRowWhoseShapeNoLongerMatchesItsTypeNamesItselfAndSaysWhatToDo() async throws {
        let garage = try TestEngine.garage()
        // Parked before `Gauge` got its `unit`.
        try await garage.park(GaugeV1(id: 1, reading: 1.5))
        try await garage.migrateAll(fromOldClassName: "GaugeV1", to: Gauge.self)
        try await garage.parkAll([Gauge(id: 2, reading: 2.5, unit: "bar"), Gauge(id: 3, reading: 3.5, unit: "bar")])

        let error = try #require(throws: DecodingError.self) { try garage.retrieve(Gauge.self, identifier: 1) }
        guard case let .keyNotFound(key, context) = error else {
            Issue.record("expected keyNotFound, got \(error)")
            return
        }
        #expect(key.stringValue == "unit")
        #expect(context.debugDescription.hasPrefix("Gauge(1): "))
        #expect(context.debugDescription.hasSuffix(DecodingError.whatToDo))
        #expect(try await garage.retrieve(Gauge.self, identifier: 2)?.unit == "bar")

        let all = try #require(throws: DecodingError.self) { try garage.retrieveAll(Gauge.self) }
        #expect(describe(all).hasPrefix("Gauge(1): "))
        let lossy = try await garage.retrieveAllLossy(Gauge.self)
        #expect(lossy.objects == [Gauge(id: 2, reading: 2.5, unit: "bar"), Gauge(id: 3, reading: 3.5, unit: "bar")])
        #expect(lossy.failures.map(\.identifier) == ["1"])
        #expect(lossy.failures.first?.error is DecodingError)
    }

    @Test func aWrongDecryptionKeyNamesTheObjectAndTheOthersStayReadable() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 10))                // plaintext
        let encryptor = TestEncryptor()
        garage.dataEncryptionDelegate = encryptor
        try garage.parkAll([Counter(id: 2, value: 20), Counter(id: 3, value: 30)])
        garage.dataEncryptionDelegate = TestEncryptor()         // another key

        let error = try #require(throws: GarageError.self) { try garage.retrieve(Counter.self, identifier: 2) }
        guard case let .decryptionFailed(type, identifier, reason) = error else {
            Issue.record("expected decryptionFailed, got \(error)")
            return
        }
        #expect(type == "Counter" && identifier == "2")
        #expect(reason.contains("CryptoKitError"))
        expect(error, says: ["type Counter", "identifier 2", "could not be decrypted",
                             "Set the dataEncryptionDelegate (and key) that encrypted it"])
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 10)
        let lossy = try garage.retrieveAllLossy(Counter.self)
        #expect(lossy.objects.map(\.id) == [1])
        #expect(lossy.failures.map(\.identifier) == ["2", "3"])

        garage.dataEncryptionDelegate = encryptor
        #expect(try garage.retrieveAll(Counter.self).map(\.value) == [10, 20, 30])
    }

    @Test func aDelegateThatDecryptsToGarbageGivesCorruptDataNamingTheObject() throws {
        let garage = try TestEngine.garage()
        garage.dataEncryptionDelegate = ReversingEncryptor()
        try garage.park(Counter(id: 1, value: 10))
        garage.dataEncryptionDelegate = IdentityEncryptor()  // "decrypts" the reversed JSON as it is
        let error = try #require(throws: GarageError.self) { try garage.retrieve(Counter.self, identifier: 1) }
        guard case let .corruptData(type, identifier, reason) = error else {
            Issue.record("expected corruptData, got \(error)")
            return
        }
        #expect(type == "Counter" && identifier == "1")
        #expect(reason.hasPrefix("its decrypted JSON is invalid (was it decrypted with another key?)"))
    }

}

@Suite("Bad input: identifiers and type names")
struct BadIdentifierTests {
    static let awkward: [String] = [
        "",
        String(repeating: "0123456789", count: 1_024),                   // 10 KB
        "ünïcødé", "日本語の識別子", "👩‍👩‍👧‍👦🏳️‍🌈", "مرحبا بالعالم", "\u{FEFF}bom", "tab\tnew\nline\r",
        "a \"quoted\" name", "O'Brien", "Robert'); DROP TABLE objects;--", "' OR '1'='1",
        "%_*?[]", "back\\slash", "/slashes/and:colons", "{\"json\":true}", "[\"Person\",\"x\"]",
    ]

    @Test(arguments: awkward.indices)
    func awkwardIdentifiersRoundTripWithTheirReferences(_ index: Int) throws {
        try Self.expectRoundTrip(Self.awkward[index])
    }

    /// An object and its child parked under `name` are retrieved, listed and deleted under it,
    /// and the other objects stay.
    static func expectRoundTrip(_ name: String) throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 1))
        let person = Person(name: name)
        person.brother = Person(name: name + "'s brother")
        try garage.park(person)

        let retrieved = try #require(try garage.retrieve(Person.self, identifier: name))
        #expect(retrieved.name == name)
        #expect(retrieved.brother?.name == name + "'s brother")
        #expect(Set(try garage.identifiers(of: Person.self)) == [name, name + "'s brother"])
        #expect(try garage.metadata(Person.self, identifier: name)?.identifier == name)
        try garage.delete(person)
        #expect(try garage.retrieve(Person.self, identifier: name) == nil)
        #expect(try garage.count(Person.self) == 1)
        // The table is still there, with the other objects.
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func identifiersThatSwiftFindsEqualAreOneObject() throws {
        let garage = try TestEngine.garage()
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        try garage.park(Person(name: decomposed))
        #expect(try garage.retrieve(Person.self, identifier: composed)?.name == decomposed)
        try garage.park(Person(name: composed, age: 41))
        #expect(try garage.count(Person.self) == 1)
        #expect(try garage.retrieve(Person.self, identifier: decomposed)?.age == 41)
    }

    @Test func anIdentifierWithANULCharacterIsRefusedAndNothingIsWritten() throws {
        let garage = try TestEngine.garage()
        let error = try #require(throws: GarageError.self) { try garage.park(Person(name: "a\u{0}b")) }
        guard case let .invalidIdentifier(type, identifier, _) = error else {
            Issue.record("expected invalidIdentifier, got \(error)")
            return
        }
        #expect(type == "Person" && identifier == "a\u{0}b")
        expect(error, says: ["type Person", #""a\0b""#, "U+0000", "Give it an identifier without that character"])

        let parent = Person(name: "parent")
        parent.brother = Person(name: "x\u{0}y")
        #expect(throws: GarageError.self) { try garage.park(parent) }
        #expect(try garage.count(Person.self) == 0)
    }

    @Test func genericTypesAreStoredUnderTheirFullNames() throws {
        let garage = try TestEngine.garage()
        let author = Author(id: UUID(), name: "Calvino")
        try garage.park(Crate(id: "c", content: 7))
        try garage.park(Crate(id: "c", content: "seven"))
        try garage.park(Crate(id: "c", content: ["seven": 7]))
        try garage.park(Crate(id: "c", content: Crate(id: "inner", content: 7)))
        try garage.park(Crate(id: "c", content: author))

        let types = try garage.store.storedTypes()
        #expect(Set(types) == [
            "Crate<Int>", "Crate<String>", "Crate<Dictionary<String, Int>>", "Crate<Crate<Int>>",
            "Crate<Author>", "Author",
        ])
        #expect(try garage.retrieve(Crate<Int>.self, identifier: "c")?.content == 7)
        #expect(try garage.retrieve(Crate<String>.self, identifier: "c")?.content == "seven")
        #expect(try garage.retrieve(Crate<[String: Int]>.self, identifier: "c")?.content == ["seven": 7])
        #expect(try garage.retrieve(Crate<Crate<Int>>.self, identifier: "c")?.content.content == 7)
        #expect(try garage.retrieve(Crate<Author>.self, identifier: "c")?.content == author)
        #expect(try garage.retrieve(Crate<Double>.self, identifier: "c") == nil)
        // The crate inside `Crate<Crate<Int>>` is Identifiable: a row of its own.
        #expect(try garage.identifiers(of: Crate<Int>.self) == ["c", "inner"])
        #expect(try garage.deleteAll(Crate<Int>.self, rule: .rowOnly) == 2)
        #expect(try garage.count(Crate<String>.self) == 1)
        #expect(try garage.identifiers(of: Crate<Author>.self) == ["c"])
    }
}

@Suite("Bad input: size and depth")
struct BadSizeTests {
    @Test func aTenMegabyteObjectRoundTrips() throws {
        let directory = try TemporaryDirectory()
        let garage = try TestEngine.garage(path: directory.path("garage.sqlite"))
        try garage.park(Counter(id: 1, value: 1))
        let blob = Blob(id: "big", text: String(repeating: "0123456789abcdef", count: 655_360),   // 10 MB
                        bytes: Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0) }),       // 1 MB
                        numbers: Array(0..<100_000))
        try garage.park(blob)
        let retrieved = try #require(try garage.retrieve(Blob.self, identifier: "big"))
        #expect(retrieved == blob)
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
        #expect(try TestEngine.garage(path: directory.path("garage.sqlite")).retrieve(Blob.self, identifier: "big") == blob)
    }

    @Test func valuesNestedDeeperThanTheLimitAreRefusedNamingTheObject() throws {
        let garage = try TestEngine.garage()
        try garage.park(Counter(id: 1, value: 1))
        var nested = Nested(child: nil)
        for _ in 0..<1_000 { nested = Nested(child: nested) }
        let error = try #require(throws: EncodingError.self) { try garage.park(Holder(id: "deep", nested: nested)) }
        guard case let .invalidValue(_, context) = error else {
            Issue.record("expected invalidValue, got \(error)")
            return
        }
        #expect(context.debugDescription.hasPrefix("Holder(deep): The value is nested 512 levels deep"))
        #expect(context.debugDescription.contains("Make some nested values Identifiable"))
        #expect(try garage.count(Holder.self) == 0)
        #expect(try garage.retrieve(Counter.self, identifier: 1)?.value == 1)
    }

    @Test func valuesNestedJustBelowTheLimitParkAndRetrieveOnASmallStack() async throws {
        let garage = try TestEngine.garage()
        var nested = Nested(child: nil)
        for _ in 0..<(JSONReader.maximumDepth - 2) { nested = Nested(child: nested) }
        let holder = UncheckedSendable(Holder(id: "deep", nested: nested))
        let depth = try onSmallStack {
            try garage.park(holder.value)
            return try garage.retrieve(Holder.self, identifier: "deep").map { depthOf($0.nested) }
        }
        #expect(depth == JSONReader.maximumDepth - 1)
        let inTask = try await Task.detached {
            try garage.retrieve(Holder.self, identifier: "deep").map { depthOf($0.nested) }
        }.value
        #expect(inTask == JSONReader.maximumDepth - 1)
    }

    @Test func aCallToTheGarageFromADeepInitFromStillThrowsInsteadOfDeadlocking() throws {
        let garage = try TestEngine.garage()
        var head = ReentrantLink(id: 0, next: nil)
        for id in 1..<300 { head = ReentrantLink(id: id, next: head) }
        try garage.park(head)
        ReentrantLink.garage.write { $0 = garage }
        defer { ReentrantLink.garage.write { $0 = nil } }
        #expect(throws: GarageError.reentrantCall(operation: "count Counter")) {
            try onSmallStack { try garage.retrieve(ReentrantLink.self, identifier: 299) }
        }
    }
}

// MARK: - Helpers

/// Runs `body` on a Foundation thread with a 512 KB stack, and returns or throws what it does.
/// Under a sanitizer (`.ci/sanitizers` sets GARAGE_SANITIZER), whose instrumented frames are
/// several times larger, the same depth of calls gets 4 times that.
func onSmallStack<T>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let result = ThreadResult<Result<T, any Error>>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        result.value = Result { try body() }
        done.signal()
    }
    thread.stackSize = 512 * 1024 * (ProcessInfo.processInfo.environment["GARAGE_SANITIZER"] == nil ? 1 : 4)
    thread.start()
    done.wait()
    return try #require(result.value).get()
}

func expect(_ error: GarageError, says parts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    for part in parts {
        #expect(error.description.contains(part), "\(error.description) does not say \(part)",
                sourceLocation: sourceLocation)
    }
    #expect(error.localizedDescription == error.description, sourceLocation: sourceLocation)
}

func describe(_ error: DecodingError) -> String {
    switch error {
    case let .typeMismatch(_, context), let .valueNotFound(_, context), let .keyNotFound(_, context),
         let .dataCorrupted(context):
        return context.debugDescription
    @unknown default:
        return "\(error)"
    }
}

private func depthOf(_ nested: Nested) -> Int {
    var depth = 1
    var node = nested
    while let child = node.child {
        depth += 1
        node = child
    }
    return depth
}

func lengthOf(_ link: ChainLink) -> Int {
    var length = 1
    var node = link
    while let next = node.next {
        length += 1
        node = next
    }
    return length
}

private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// "Encrypts" by reversing the JSON's bytes, which are then no JSON at all.
final class ReversingEncryptor: DataEncryptionDelegate, Sendable {
    func encrypt(_ data: Data) throws -> String { String(decoding: data.reversed(), as: UTF8.self) }
    func decrypt(_ string: String) throws -> Data { Data(string.utf8.reversed()) }
}

/// "Decrypts" by returning the stored text as it is.
final class IdentityEncryptor: DataEncryptionDelegate, Sendable {
    func encrypt(_ data: Data) throws -> String { String(decoding: data, as: UTF8.self) }
    func decrypt(_ string: String) throws -> Data { Data(string.utf8) }
}
