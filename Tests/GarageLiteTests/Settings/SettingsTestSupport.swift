import Foundation
import Testing
@testable import GarageLite

// Namespaces, values and helpers of the settings tests. Every name starts with `ST`: test
// model names must be unique in the test target.

enum STAnimals: SettingsNamespace {
    static let id = "animals"
}

enum STCats: SettingsNamespace {
    typealias Parent = STAnimals
    static let id = "cats"
}

/// A namespace that adds nothing to its keys' ids.
enum STUnnamed: SettingsNamespace {
    typealias Parent = STCats
    static let id = ""
}

/// Two namespaces each other's parent: the chain stops where it comes back.
enum STLoopA: SettingsNamespace {
    typealias Parent = STLoopB
    static let id = "a"
}

enum STLoopB: SettingsNamespace {
    typealias Parent = STLoopA
    static let id = "b"
}

/// What the hooks of the hooked namespaces saw, for the test (task) that binds it.
final class STHookLog: Sendable {
    let entries = Protected<[String]>([])
    /// The ids of the keys whose changes `willSet` refuses.
    let refused: Set<String>

    init(refusing refused: Set<String> = []) {
        self.refused = refused
    }

    @TaskLocal static var current: STHookLog?

    static func record(_ entry: String) {
        current?.entries.write { $0.append(entry) }
    }

    var recorded: [String] { entries.read { $0 } }
}

struct STRefusal: Error, Equatable {
    var key: String
}

/// A namespace whose hooks log, and refuse the keys the log says.
enum STHookedParent: SettingsNamespace {
    static let id = "hooked"

    static func willSet(_ change: SettingsChange, in garage: Garage) throws {
        STHookLog.record("parent will \(change)")
    }

    static func didSet(_ change: SettingsChange, in garage: Garage) {
        STHookLog.record("parent did \(change)")
    }
}

enum STHookedChild: SettingsNamespace {
    typealias Parent = STHookedParent
    static let id = "child"

    static func willSet(_ change: SettingsChange, in garage: Garage) throws {
        STHookLog.record("child will \(change)")
        if STHookLog.current?.refused.contains(change.keyID) == true { throw STRefusal(key: change.keyID) }
    }

    static func didSet(_ change: SettingsChange, in garage: Garage) {
        STHookLog.record("child did \(change)")
    }
}

enum STTheme: Int, Sendable {
    case light = 1
    case dark = 2
}

enum STSpeed: String, Codable, Sendable {
    case slow, fast
}

struct STWindow: Codable, Sendable, Equatable {
    var width: Double
    var height: Double
}

/// Storez's example: a value transformed on set.
struct STFillIn: Codable, Sendable, Equatable {
    var strings: [String]
}

/// A transformer of the test's own: stores a window's area beside it, as a string.
struct STWindowText: Transformer {
    func transform(_ value: STWindow) -> String { "\(value.width)x\(value.height)" }

    func untransform(_ value: String) throws -> STWindow {
        let parts = value.split(separator: "x").compactMap { Double($0) }
        guard parts.count == 2 else { throw TransformerError.noValue(forRawValue: value, of: "STWindow") }
        return STWindow(width: parts[0], height: parts[1])
    }
}

/// Counts how many times a default was made.
final class STCounter: Sendable {
    private let count = Protected(0)

    var value: Int { count.read { $0 } }

    func next() -> Int {
        count.write { $0 += 1; return $0 }
    }
}

/// The stored row of the setting `id`: its JSON (or ciphertext) and whether it is encrypted.
func stStoredSetting(_ garage: Garage, _ id: String) throws -> StoredRow? {
    try garage.store.storedRow(ObjectKey(typeName: "GarageLite.Setting", identifier: id))
}

/// Reads `updates` on a task of its own, handing each update to the test as it comes, so that
/// the test can wait for one before it makes the next change.
struct STUpdateReader<Value: Sendable> {
    /// Cancels the reading task when the reader goes.
    private final class Handle: Sendable {
        let task: Task<Void, Never>
        init(_ task: Task<Void, Never>) { self.task = task }
        deinit { task.cancel() }
    }

    private let handle: Handle
    private var received: AsyncStream<Result<SettingsUpdate<Value>, any Error>>.Iterator

    init(_ updates: SettingsUpdates<Value>) {
        let (stream, continuation) = AsyncStream<Result<SettingsUpdate<Value>, any Error>>.makeStream()
        received = stream.makeAsyncIterator()
        handle = Handle(Task {
            do {
                for try await update in updates { continuation.yield(.success(update)) }
            } catch {
                continuation.yield(.failure(error))
            }
            continuation.finish()
        })
    }

    /// The next update the other task read (the test's time limit is the only limit on the wait).
    mutating func next() async throws -> SettingsUpdate<Value>? {
        try await received.next()?.get()
    }
}
