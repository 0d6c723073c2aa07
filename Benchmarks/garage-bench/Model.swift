import Foundation
import GarageLite

// The objects every implementation parks: a person with an address, two dates and three tags
// (about 250 bytes of JSON), and a team that holds identifiable people.

struct BenchAddress: Codable, Hashable {
    var street: String
    var city: String
    var zip: String
    var country: String
}

struct BenchPerson: Codable, Identifiable, Syncable {
    var id: String
    var name: String
    var email: String
    var address: BenchAddress
    var birthdate: Date
    var createdAt: Date
    var tags: [String]
    var syncStatus: SyncStatus
}

/// A parent with identifiable children: GarageLite parks each member as its own row and keeps
/// their identifiers in the team's JSON.
struct BenchTeam: Codable, Identifiable {
    var id: String
    var name: String
    var members: [BenchPerson]
}

/// How the floor and the GRDB baseline store a team: the members are their own rows, and the
/// team's JSON lists their identifiers, which is what GarageLite does for them.
struct StoredTeam: Codable {
    var id: String
    var name: String
    var memberIDs: [String]
}

/// A tiny deterministic generator (Vigna's SplitMix64), so that every run and every
/// implementation gets the same data and the same random order.
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

enum BenchData {
    static let seed: UInt64 = 0x6761_7261_6765 // "garage"

    private static let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Linus",
                                     "Ken", "Dennis", "Frances", "John", "Radia", "Tim", "Katherine", "Guido"]
    private static let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton",
                                    "Torvalds", "Thompson", "Ritchie", "Allen", "Backus", "Perlman", "Lee",
                                    "Johnson", "Rossum"]
    private static let streets = ["Maple Street", "Oak Avenue", "Cedar Lane", "Pine Road", "Elm Boulevard", "Birch Way"]
    private static let cities = ["Springfield", "Riverside", "Fairview", "Greenville", "Madison", "Georgetown"]
    private static let countries = ["US", "CA", "GB", "DE", "FR", "AU"]
    private static let tagPool = ["swift", "sqlite", "json", "sync", "mobile", "linux", "server", "garage",
                                  "codable", "offline"]

    /// `prefix` followed by `n` padded with zeros, so that identifier order is creation order.
    static func identifier(_ prefix: String, _ n: Int, width: Int = 7) -> String {
        let digits = String(n)
        return prefix + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The `index`th person: a pure function of `prefix` and `index`.
    static func person(_ index: Int, prefix: String = "p", status: SyncStatus = .notSynced) -> BenchPerson {
        var rng = SplitMix64(seed: seed ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        let first = firstNames.randomElement(using: &rng)!
        let last = lastNames.randomElement(using: &rng)!
        var tags = tagPool
        tags.shuffle(using: &rng)
        let birth = Double(Int.random(in: -14_000 ... -1_000, using: &rng) * 86_400) // a day, at midnight
        let created = Double(Int.random(in: 600_000_000 ... 780_000_000, using: &rng)) + Double.random(in: 0..<1, using: &rng)
        return BenchPerson(
            id: identifier(prefix, index),
            name: "\(first) \(last)",
            email: "\(first.lowercased()).\(last.lowercased())@example.com",
            address: BenchAddress(
                street: "\(Int.random(in: 1...9999, using: &rng)) \(streets.randomElement(using: &rng)!)",
                city: cities.randomElement(using: &rng)!,
                zip: String(Int.random(in: 10000...99999, using: &rng)),
                country: countries.randomElement(using: &rng)!),
            birthdate: Date(timeIntervalSinceReferenceDate: birth),
            createdAt: Date(timeIntervalSinceReferenceDate: created),
            tags: Array(tags.prefix(3)),
            syncStatus: status)
    }

    /// The `index`th person as the server sends it back, `.synced`: edited there (another
    /// e-mail domain, the same JSON size).
    static func downloaded(_ index: Int) -> BenchPerson {
        var person = person(index, status: .synced)
        person.email = person.email.replacingOccurrences(of: "@example.com", with: "@example.org")
        return person
    }

    /// People `range` (flat objects).
    static func people(_ range: Range<Int>, status: (Int) -> SyncStatus = { _ in .notSynced }) -> [BenchPerson] {
        range.map { person($0, status: status($0)) }
    }

    /// Teams `range`, each with `memberCount` members of its own.
    static func teams(_ range: Range<Int>, memberCount: Int) -> [BenchTeam] {
        range.map { t in
            let teamID = identifier("t", t)
            return BenchTeam(
                id: teamID,
                name: "Team \(t)",
                members: (0..<memberCount).map { m in person(t &* 1000 &+ m, prefix: "\(teamID)-m") })
        }
    }
}

// MARK: - Notes, for the query workloads

/// A note (about 254 bytes of JSON): what the query workloads store, filter by notebook and
/// sort by title.
struct BenchNote: Codable, Identifiable, Hashable, Sendable {
    var id: String
    /// Unique: `"<topic> <kind> <8 hex digits>"`, the digits a bijection of the note's index.
    var title: String
    /// `"Notebook 0042"`: note `i` is in notebook `i % notebooks`.
    var notebook: String
    var tags: [String]
    var body: String
    /// Seconds since the reference date.
    var edited: Double
}

extension BenchData {
    private static let noteTopics = ["Meeting", "Recipe", "Reading", "Travel", "Budget", "Garden", "Project",
                                     "Workout", "Ideas", "Journal", "Shopping", "Music"]
    private static let noteKinds = ["notes", "plan", "list", "draft", "summary", "log", "review", "checklist"]
    private static let noteTags = ["home", "work", "urgent", "later", "family", "health", "money", "books",
                                   "someday", "errands", "school", "kitchen"]
    private static let bodyWords = ["call", "the", "bank", "about", "new", "account", "remember", "to", "bring",
                                    "charger", "and", "receipts", "for", "next", "week", "check", "train", "times",
                                    "ask", "Sam", "review", "draft", "before", "Friday", "buy", "milk", "eggs",
                                    "bread", "fix", "bike", "light", "book", "dentist", "water", "plants"]
    /// Rarer words, for the text search rows: one body word in `rareWordOdds` is one of these,
    /// the `k`th with weight 1/(k+1) (Zipf), so that the first is in about 9 % of the notes,
    /// the second in 4.5 % and the last (`rarestWord`) in about 0.3 % (a note holds about 20
    /// body words; every body word above, drawn otherwise, is in about 43 % of the notes). None
    /// of them is a word of a title.
    static let rareBodyWords = ["doctor", "invoice", "package", "ticket", "holiday", "printer", "laptop", "insurance",
                                "passport", "plumber", "birthday", "library", "parking", "vaccine", "mortgage", "keyboard",
                                "umbrella", "warranty", "landlord", "battery", "carpet", "lawyer", "pharmacy", "sunscreen",
                                "visa", "ladder", "piano", "tuxedo", "harmonica", "telescope", "violin", "zeppelin"]
    static var rarestWord: String { rareBodyWords[rareBodyWords.count - 1] }
    /// One body word in this many is a rarer word.
    private static let rareWordOdds = 52
    /// The cumulative Zipf weights of `rareBodyWords`, the last 1.
    private static let rareWordThresholds: [Double] = {
        let weights = rareBodyWords.indices.map { 1 / Double($0 + 1) }
        let total = weights.reduce(0, +)
        var sum = 0.0
        return weights.map { sum += $0; return sum / total }
    }()

    /// A body word: a rarer one once in `rareWordOdds`, else a common one.
    private static func bodyWord(using rng: inout SplitMix64) -> String {
        guard Int.random(in: 0..<rareWordOdds, using: &rng) == 0 else { return bodyWords.randomElement(using: &rng)! }
        let roll = Double.random(in: 0..<1, using: &rng)
        return rareBodyWords[rareWordThresholds.firstIndex { roll < $0 } ?? rareBodyWords.count - 1]
    }

    /// The notebook named by its number.
    static func notebook(_ number: Int) -> String {
        "Notebook " + identifier("", number, width: 4)
    }

    /// Note `index`'s title, a pure function of `index`, unique for every index below 2^32
    /// (multiplying by an odd number is a bijection modulo 2^32).
    static func noteTitle(_ index: Int) -> String {
        var rng = SplitMix64(seed: seed ^ 0x6E6F_7465 ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        let topic = noteTopics.randomElement(using: &rng)!
        let kind = noteKinds.randomElement(using: &rng)!
        let digits = String(UInt32(truncatingIfNeeded: UInt64(index) &* 0x9E37_79B1), radix: 16)
        return "\(topic) \(kind) \(String(repeating: "0", count: 8 - digits.count))\(digits)"
    }

    /// Note `index` of a store with `notebooks` notebooks: a pure function of both.
    static func note(_ index: Int, notebooks: Int) -> BenchNote {
        var rng = SplitMix64(seed: seed ^ 0x626F_6479 ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        var tags = noteTags
        tags.shuffle(using: &rng)
        var body = ""
        while body.utf8.count < 110 {
            body += (body.isEmpty ? "" : " ") + bodyWord(using: &rng)
        }
        return BenchNote(
            id: identifier("n", index),
            title: noteTitle(index),
            notebook: notebook(index % notebooks),
            tags: Array(tags.prefix(Int.random(in: 1...3, using: &rng))),
            body: body + ".",
            edited: Double(Int.random(in: 700_000_000 ... 780_000_000, using: &rng)) + Double.random(in: 0..<1, using: &rng))
    }

    /// Notes `range` of a store with `notebooks` notebooks.
    static func notes(_ range: Range<Int>, notebooks: Int) -> [BenchNote] {
        range.map { note($0, notebooks: notebooks) }
    }
}
