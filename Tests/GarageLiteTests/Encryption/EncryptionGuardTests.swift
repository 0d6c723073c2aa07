import Foundation
import Testing
@testable import GarageLite

/// Issue 25, issue 45: the encryption guard is described once (`EncryptionGuard`); SQLite and
/// PostgreSQL enforce it with triggers generated from it, for every writer, and the reference
/// engine in Swift. Random writes of rows (unencrypted, encrypted with the current key, a key the
/// store no longer uses, a retired one; new data or the same; tombstones' empty data) under
/// random guards must be refused by the test engine's triggers and by the reference engine
/// exactly when the rule refuses them, with the same error, and count the same encryptions.
///
/// `GARAGE_GUARD_SEQUENCES=2000 swift test --filter EncryptionGuardTests` runs more (default 60,
/// 20 on PostgreSQL).
@Suite("The encryption guard's triggers obey its rule")
struct EncryptionGuardTests {
    static let sequences = ProcessInfo.processInfo.environment["GARAGE_GUARD_SEQUENCES"].flatMap { Int($0) }
        ?? (TestEngine.isPostgres ? 20 : 60)

    static let guards: [EncryptionGuard] = [
        EncryptionGuard(current: (limit: 4, envelopePrefixes: ["AQ", "Ag"])),
        EncryptionGuard(current: (limit: 2, envelopePrefixes: ["AQ"])),
        EncryptionGuard(current: nil, retired: ["AQ", "Aw"]),
        EncryptionGuard(current: (limit: 3, envelopePrefixes: ["Ag"]), retired: ["AQ"]),
        EncryptionGuard(current: nil),
    ]
    static let datas: [(String, Bool)] = [
        ("", false), ("", true), (#"{"v":1}"#, false), (#"{"v":2}"#, false),
        ("AQxyz", true), ("AQabc", true), ("Agxyz", true), ("Awold", true), ("Q9other", true), ("AQxyz", false),
    ]

    /// The test engine's, then the reference engine's.
    @Test(arguments: [false, true])
    func randomWritesAreRefusedByTheTriggersAsByTheRule(onReference: Bool) throws {
        var random = SplitMix64(state: 0x4775_6172_64)
        for sequence in 0..<Self.sequences {
            let engine: any StorageEngine = onReference ? ReferenceEngine() : try TestEngine.garage().store.engine
            var history: [String] = []
            // Rows written before the guard, as a store being encrypted or decrypted has them.
            for identifier in ["a", "b"] {
                let (data, isEncrypted) = Self.datas.randomElement(using: &random)!
                try engine.write("guard") { try $0.putRow(Self.row(identifier, data, isEncrypted)) }
                history.append("before: \(identifier) \(data) \(isEncrypted)")
            }
            let guardRule = Self.guards.randomElement(using: &random)!
            history.append("guard: \(guardRule.current.map { "\($0.limit) \($0.envelopePrefixes)" } ?? "none") retired \(guardRule.retired)")
            try engine.write("guard") { statements in
                try statements.transaction {
                    if guardRule.current != nil { try statements.setEncryptionCount(0) }
                    try statements.setEncryptionGuard(guardRule)
                }
            }
            var encryptions: Int64 = 0
            for _ in 0..<12 {
                let identifier = ["a", "b", "c"].randomElement(using: &random)!
                let (data, isEncrypted) = Self.datas.randomElement(using: &random)!
                history.append("write: \(identifier) \(data) \(isEncrypted)")
                let context = Comment(rawValue: "sequence \(sequence):\n" + history.joined(separator: "\n"))
                let old = try engine.write("guard") { try $0.record(ObjectKey(typeName: "Row", identifier: identifier))?.get() }
                let previous = old.map { (data: $0.data, isEncrypted: $0.isEncrypted) }
                let expected: Result<Bool, EncryptionGuard.Refusal>
                do {
                    expected = .success(try guardRule.check(writing: (data, isEncrypted), over: previous, encryptions: encryptions))
                } catch {
                    expected = .failure(error)
                }
                let outcome: Result<Void, any Error> = Result {
                    try engine.write("guard") { statements in
                        try statements.transaction { try statements.putRow(Self.row(identifier, data, isEncrypted)) }
                    }
                }
                switch (expected, outcome) {
                case (.success(let counts), .success):
                    if counts { encryptions += 1 }
                case (.failure(let refusal), .failure(let error)):
                    let mapped = engine.garageError(error, operation: "guard") as? GarageError
                    try #require(mapped == refusal.garageError(path: engine.path ?? ":memory:"), context)
                default:
                    Issue.record(Comment(rawValue: "rule: \(expected), triggers: \(outcome)\n" + context.rawValue))
                    return
                }
                if guardRule.current != nil {
                    try #require(try engine.write("guard") { try $0.encryptionCount() } == encryptions, context)
                }
            }
        }
    }

    static func row(_ identifier: String, _ data: String, _ isEncrypted: Bool) -> StoredRow {
        StoredRow(key: ObjectKey(typeName: "Row", identifier: identifier), data: data, isEncrypted: isEncrypted,
                  syncStatus: .notSynced, creationDate: Date(timeIntervalSince1970: 0), modificationDate: Date(timeIntervalSince1970: 0),
                  revision: 1, isRoot: true, references: "[]")
    }
}
