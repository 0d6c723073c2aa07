import Foundation
import GarageLite

/// The object both contenders store: a note of about 330 bytes of JSON (a title, a body of
/// about 200 bytes, three tags and a date), flat (no identifiable children), `Syncable`.
struct BenchNote: Codable, Identifiable, Syncable, Sendable, Equatable {
    var id: String
    var title: String
    var body: String
    var tags: [String]
    var modified: Date
    var syncStatus: SyncStatus
}

/// Vigna's SplitMix64: every run, and both contenders, get the same notes and the same
/// random order of retrieves.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The notes of the workloads: pure functions of their index.
enum BenchData {
    static let seed: UInt64 = 0x7067_6172_6167_65 // "pgarage"

    /// The type name both contenders store the notes under (GarageLite's, `String(describing:)`).
    static let typeName = String(describing: BenchNote.self)

    private static let words = ["garage", "postgres", "swift", "codable", "sync", "claim", "server", "offline",
                                "batch", "schema", "trigger", "index", "upload", "replica", "lease", "worker"]
    private static let tagPool = ["work", "home", "ideas", "todo", "later", "urgent", "reading", "travel"]

    /// `note-` and `index` padded with zeros, so that identifier order is creation order.
    static func identifier(_ index: Int) -> String {
        let digits = String(index)
        return "note-" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    /// The `index`th note, `.notSynced`.
    static func note(_ index: Int) -> BenchNote {
        var rng = SplitMix64(seed: seed ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        func sentence(_ count: Int) -> String {
            (0..<count).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
        }
        var tags = tagPool
        tags.shuffle(using: &rng)
        // About 200 bytes: 28 words of 4 to 8 letters and their spaces.
        let body = sentence(28)
        return BenchNote(
            id: identifier(index), title: sentence(4).capitalized, body: String(body.prefix(200)),
            tags: Array(tags.prefix(3)),
            modified: Date(timeIntervalSince1970: 1_700_000_000 + Double(Int.random(in: 0..<30_000_000, using: &rng))),
            syncStatus: .notSynced)
    }

    /// Notes `0..<count`.
    static func notes(_ count: Int) -> [BenchNote] {
        (0..<count).map(note)
    }

    /// The identifiers of notes `0..<count` in a random order (the same every run).
    static func shuffledIdentifiers(_ count: Int) -> [String] {
        var rng = SplitMix64(seed: seed)
        var identifiers = (0..<count).map(identifier)
        identifiers.shuffle(using: &rng)
        return identifiers
    }
}
