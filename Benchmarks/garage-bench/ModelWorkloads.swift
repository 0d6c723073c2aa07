import Foundation
import GarageLite
import GRDB
import GRDBSQLite

// The model rows ("model: …"; --filter model runs them alone): parkAll, retrieve by identifier
// and retrieveAll of four more models than the person, each with what apps' models hold and the
// person doesn't: dates under the default strategy and as ISO 8601 strings, custom coding keys,
// optionals and enums, arrays of numbers. The codec's speed on one model says little about the
// next one; these rows keep it honest on each.

/// A model of the model rows: every implementation parks it as one JSON row.
protocol BenchModel: Codable, Identifiable, Equatable, Sendable where ID == String {
    /// Its row's name, and its type's name in the floor's and GRDB's tables.
    static var label: String { get }
    /// What it holds, for the row's name.
    static var summary: String { get }
    /// Whether its dates are ISO 8601 strings (every implementation's coders set so), or the
    /// coders' default (seconds since the reference date).
    static var datesAreISO8601: Bool { get }
    /// The `index`th object: a pure function of `index`.
    static func make(_ index: Int) -> Self
}

extension BenchModel {
    static var datesAreISO8601: Bool { false }
}

/// The model of the independent benchmark issue 46 quotes: three dates under the default
/// strategy, a nested struct, custom coding keys and an array of strings.
struct BenchInvoice: BenchModel {
    struct Party: Codable, Equatable, Sendable {
        var name: String
        var street: String
        var city: String
        var postcode: String
    }

    var id: String
    var number: String
    var customer: Party
    var issuedAt: Date
    var dueAt: Date
    var paidAt: Date
    var labels: [String]
    var total: Double

    enum CodingKeys: String, CodingKey {
        case id, customer, labels, total
        case number = "invoice_number"
        case issuedAt = "issued_at"
        case dueAt = "due_at"
        case paidAt = "paid_at"
    }

    static let label = "invoice"
    static let summary = "3 dates (default), nested struct, CodingKeys, [String]"

    static func make(_ index: Int) -> BenchInvoice {
        var rng = SplitMix64(seed: BenchData.seed ^ 0x696E_766F ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        let issued = Double(Int.random(in: 700_000_000 ... 780_000_000, using: &rng)) + Double.random(in: 0..<1, using: &rng)
        let words = ["urgent", "export", "retainer", "hardware", "consulting", "annual", "q3", "eu", "disputed"]
        return BenchInvoice(
            id: BenchData.identifier("i", index),
            number: "INV-\(BenchData.identifier("", index, width: 8))",
            customer: Party(name: "Customer \(Int.random(in: 1...5000, using: &rng))",
                            street: "\(Int.random(in: 1...999, using: &rng)) Market Street",
                            city: ["Lyon", "Leeds", "Porto", "Graz"].randomElement(using: &rng)!,
                            postcode: String(Int.random(in: 10000...99999, using: &rng))),
            issuedAt: Date(timeIntervalSinceReferenceDate: issued),
            dueAt: Date(timeIntervalSinceReferenceDate: issued + 30 * 86_400),
            paidAt: Date(timeIntervalSinceReferenceDate: issued + Double(Int.random(in: 1...40, using: &rng)) * 86_400 + 0.25),
            labels: Array(words.shuffled(using: &rng).prefix(3)),
            total: Double(Int.random(in: 100...1_000_000, using: &rng)) / 100)
    }
}

/// Dates as ISO 8601 strings (whole seconds, as the format keeps them), a nested struct of
/// numbers, an array of strings.
struct BenchEvent: BenchModel {
    struct Venue: Codable, Equatable, Sendable {
        var name: String
        var latitude: Double
        var longitude: Double
    }

    var id: String
    var title: String
    var startsAt: Date
    var endsAt: Date
    var venue: Venue
    var attendees: [String]

    static let label = "event"
    static let summary = "2 dates (ISO 8601), nested struct of numbers, [String]"
    static let datesAreISO8601 = true

    static func make(_ index: Int) -> BenchEvent {
        var rng = SplitMix64(seed: BenchData.seed ^ 0x6576_656E ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        let start = Double(Int.random(in: 700_000_000 ... 780_000_000, using: &rng))
        let names = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Linus", "Ken"]
        return BenchEvent(
            id: BenchData.identifier("e", index),
            title: "Meetup \(Int.random(in: 1...999, using: &rng))",
            startsAt: Date(timeIntervalSinceReferenceDate: start),
            endsAt: Date(timeIntervalSinceReferenceDate: start + 7200),
            venue: Venue(name: "Hall \(Int.random(in: 1...50, using: &rng))",
                         latitude: Double(Int.random(in: -90_000_000...90_000_000, using: &rng)) / 1e6,
                         longitude: Double(Int.random(in: -180_000_000...180_000_000, using: &rng)) / 1e6),
            attendees: Array(names.shuffled(using: &rng).prefix(4)))
    }
}

/// Optionals (half of them nil) and enums (a string and an integer raw value).
struct BenchTask: BenchModel {
    enum State: String, Codable, Sendable { case todo, doing, blocked, done }
    enum Priority: Int, Codable, Sendable { case low = 1, normal, high, critical }

    var id: String
    var title: String
    var state: State
    var priority: Priority
    var assignee: String?
    var estimateHours: Int?
    var due: Date?
    var parentID: String?
    var done: Bool

    static let label = "task"
    static let summary = "optionals (half nil), String and Int enums, a Bool"

    static func make(_ index: Int) -> BenchTask {
        var rng = SplitMix64(seed: BenchData.seed ^ 0x7461_736B ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        let filled = index % 2 == 0
        let state = [State.todo, .doing, .blocked, .done].randomElement(using: &rng)!
        return BenchTask(
            id: BenchData.identifier("k", index),
            title: "Task \(Int.random(in: 1...99_999, using: &rng)): review the draft",
            state: state,
            priority: [Priority.low, .normal, .high, .critical].randomElement(using: &rng)!,
            assignee: filled ? "user\(Int.random(in: 1...500, using: &rng))@example.com" : nil,
            estimateHours: filled ? Int.random(in: 1...40, using: &rng) : nil,
            due: filled ? Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 700_000_000 ... 780_000_000, using: &rng))) : nil,
            parentID: index % 4 == 1 ? BenchData.identifier("k", index - 1) : nil,
            done: state == .done)
    }
}

/// Arrays of numbers: doubles with a fraction, and integers.
struct BenchReading: BenchModel {
    var id: String
    var sensor: String
    var values: [Double]
    var counts: [Int]
    var scale: Double
    var calibrated: Bool

    static let label = "reading"
    static let summary = "[Double] (12), [Int] (8), numbers"

    static func make(_ index: Int) -> BenchReading {
        var rng = SplitMix64(seed: BenchData.seed ^ 0x7265_6164 ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        return BenchReading(
            id: BenchData.identifier("r", index),
            sensor: "sensor-\(Int.random(in: 1...200, using: &rng))",
            values: (0..<12).map { _ in Double(Int.random(in: -500_000...500_000, using: &rng)) / 1000 },
            counts: (0..<8).map { _ in Int.random(in: 0...100_000, using: &rng) },
            scale: Double.random(in: 0.5..<2, using: &rng),
            calibrated: Bool.random(using: &rng))
    }
}

/// Foundation's other value types, a dictionary, a set, an array of structs and an enum with
/// associated values.
struct BenchProfile: BenchModel {
    struct Link: Codable, Equatable, Sendable {
        var title: String
        var url: URL
    }

    enum Contact: Codable, Equatable, Sendable {
        case email(String)
        case phone(country: Int, number: String)
    }

    var id: String
    var uuid: UUID
    var homepage: URL
    var balance: Decimal
    var avatar: Data
    var settings: [String: String]
    var roles: Set<String>
    var links: [Link]
    var contact: Contact

    static let label = "profile"
    static let summary = "UUID, URL, Decimal, Data, [String: String], Set, [struct], enum with payloads"

    static func make(_ index: Int) -> BenchProfile {
        var rng = SplitMix64(seed: BenchData.seed ^ 0x7072_6F66 ^ (UInt64(index) &* 0x2545_F491_4F6C_DD1D))
        let user = "user\(Int.random(in: 1...99_999, using: &rng))"
        let roles = ["admin", "editor", "viewer", "billing", "support", "owner"]
        return BenchProfile(
            id: BenchData.identifier("f", index),
            uuid: UUID(uuid: (0..<16).reduce(into: [UInt8]()) { bytes, _ in bytes.append(UInt8.random(in: 0...255, using: &rng)) }
                .withUnsafeBytes { $0.load(as: uuid_t.self) }),
            homepage: URL(string: "https://example.com/\(user)")!,
            balance: Decimal(Int.random(in: -100_000...1_000_000, using: &rng)) / 100,
            avatar: Data((0..<24).map { _ in UInt8.random(in: 0...255, using: &rng) }),
            settings: ["theme": ["dark", "light"].randomElement(using: &rng)!, "language": ["en", "fr", "de"].randomElement(using: &rng)!,
                       "digest": Bool.random(using: &rng) ? "daily" : "weekly"],
            roles: Set(roles.shuffled(using: &rng).prefix(2)),
            links: (0..<2).map { k in Link(title: "Link \(k)", url: URL(string: "https://example.org/\(user)/\(k)")!) },
            contact: Bool.random(using: &rng) ? .email("\(user)@example.com")
                : .phone(country: Int.random(in: 1...99, using: &rng), number: String(Int.random(in: 1_000_000...9_999_999, using: &rng))))
    }
}

/// The models of the model rows, in the table's order.
enum BenchModels {
    static let all: [any BenchModel.Type] = [BenchInvoice.self, BenchEvent.self, BenchTask.self, BenchReading.self,
                                             BenchProfile.self]
}

// MARK: - The implementations

/// What the model rows ask of each implementation: parking a batch, and reading back.
protocol ModelContender {
    /// Parks `objects` in one call (one transaction).
    func parkAll<Model: BenchModel>(models objects: [Model]) throws
    func retrieve<Model: BenchModel>(_ type: Model.Type, id: String) throws -> Model?
    func retrieveAll<Model: BenchModel>(_ type: Model.Type) throws -> [Model]
}

extension GarageLiteContender: ModelContender {
    func parkAll<Model: BenchModel>(models objects: [Model]) throws {
        let garage = try store
        // Set once, as an app with such a model sets them: every model row parks its objects
        // (its setup, or its timed part) before it reads them.
        if Model.datesAreISO8601 {
            garage.dateEncodingStrategy = .iso8601
            garage.dateDecodingStrategy = .iso8601
        }
        try garage.parkAll(objects)
    }

    func retrieve<Model: BenchModel>(_ type: Model.Type, id: String) throws -> Model? {
        try store.retrieve(type, identifier: id)
    }

    func retrieveAll<Model: BenchModel>(_ type: Model.Type) throws -> [Model] {
        try store.retrieveAll(type)
    }
}

/// Foundation's coders, set for a model's dates: made once per store, not per call.
final class ModelCoders {
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()
    private let isoEncoder = JSONEncoder()
    private let isoDecoder = JSONDecoder()

    init() {
        isoEncoder.dateEncodingStrategy = .iso8601
        isoDecoder.dateDecodingStrategy = .iso8601
    }

    func encoder<Model: BenchModel>(for _: Model.Type) -> JSONEncoder { Model.datesAreISO8601 ? isoEncoder : encoder }
    func decoder<Model: BenchModel>(for _: Model.Type) -> JSONDecoder { Model.datesAreISO8601 ? isoDecoder : decoder }
}

/// The floor's statements and coders for the model rows.
final class FloorModelState {
    let select: FloorContender.Statement
    let selectAll: FloorContender.Statement
    let coders = ModelCoders()

    init(_ floor: FloorContender) throws {
        select = try floor.prepare("SELECT data FROM floor_object WHERE type = ?1 AND identifier = ?2")
        selectAll = try floor.prepare("SELECT data FROM floor_object WHERE type = ?1 ORDER BY identifier")
    }

    func finalize() {
        select.finalize()
        selectAll.finalize()
    }
}

extension FloorContender: ModelContender {
    private func models() throws -> FloorModelState {
        if let modelState { return modelState }
        let state = try FloorModelState(self)
        modelState = state
        return state
    }

    func parkAll<Model: BenchModel>(models objects: [Model]) throws {
        let encoder = try models().coders.encoder(for: Model.self)
        try transaction {
            let now = Date().timeIntervalSinceReferenceDate
            for object in objects {
                try write(type: Model.label, id: object.id, data: encoder.encode(object), status: .undetermined, at: now)
            }
        }
    }

    func retrieve<Model: BenchModel>(_ type: Model.Type, id: String) throws -> Model? {
        let state = try models()
        let s = state.select.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, Model.label, -1, sqliteTransient)
        sqlite3_bind_text(s, 2, id, -1, sqliteTransient)
        guard try step(s) else { return nil }
        return try state.coders.decoder(for: type).decode(type, from: columnData(s, 0))
    }

    func retrieveAll<Model: BenchModel>(_ type: Model.Type) throws -> [Model] {
        let state = try models()
        let decoder = state.coders.decoder(for: type)
        let s = state.selectAll.handle
        defer { sqlite3_reset(s) }
        sqlite3_bind_text(s, 1, Model.label, -1, sqliteTransient)
        var objects: [Model] = []
        while try step(s) {
            objects.append(try decoder.decode(type, from: columnData(s, 0)))
        }
        return objects
    }
}

/// A GRDB record of any model: its JSON in a data column.
struct ModelRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "model"
    var id: String
    var data: String
    var modificationDate: Date
}

extension GRDBContender: ModelContender {
    func parkAll<Model: BenchModel>(models objects: [Model]) throws {
        let encoder = modelCoders.encoder(for: Model.self)
        try pool.write { db in
            let now = Date()
            for object in objects {
                try ModelRecord(id: object.id, data: String(decoding: try encoder.encode(object), as: UTF8.self),
                                modificationDate: now).insert(db)
            }
        }
    }

    func retrieve<Model: BenchModel>(_ type: Model.Type, id: String) throws -> Model? {
        let decoder = modelCoders.decoder(for: type)
        return try pool.read { db in try ModelRecord.fetchOne(db, key: id) }
            .map { try decoder.decode(type, from: Data($0.data.utf8)) }
    }

    func retrieveAll<Model: BenchModel>(_ type: Model.Type) throws -> [Model] {
        let decoder = modelCoders.decoder(for: type)
        return try pool.read { db in try ModelRecord.fetchAll(db) }
            .map { try decoder.decode(type, from: Data($0.data.utf8)) }
    }
}

// MARK: - The workloads

extension Workloads {
    /// The model rows: parkAll, retrieve by identifier and retrieveAll of each model.
    var modelRows: [Workload] {
        BenchModels.all.flatMap { modelRows(for: $0) }
    }

    private func modelRows<Model: BenchModel>(for _: Model.Type) -> [Workload] {
        let n = sizes.flat
        let name = "model: \(Model.label) (\(Model.summary); \(jsonBytes(Model.self)) B)"
        let objects = Input<[Model]>()
        /// Some of the objects read back, equal to what was parked.
        func verifySample(_ contender: any Contender) throws {
            for index in [0, n / 2, n - 1] {
                let stored = try contender.models.retrieve(Model.self, id: Model.make(index).id)
                try expect(stored == Model.make(index), "\(Model.label) \(index) reads back \(String(describing: stored))")
            }
        }
        func build(_ contender: any Contender) throws {
            var start = 0
            while start < n {
                let end = min(start + sizes.buildBatch, n)
                try contender.models.parkAll(models: (start..<end).map(Model.make))
                start = end
            }
        }
        let parkAll = Workload(
            name: "\(name): parkAll \(short(n)), one call", unit: "objects/s", runs: 1,
            setup: { _ in },
            timed: { try $0.models.parkAll(models: objects.get()); return n },
            verify: { contender in
                let count = try contender.models.retrieveAll(Model.self).count
                try expect(count == n, "parked \(count) of \(n)")
                try verifySample(contender)
            },
            prepareInputs: { objects.set((0..<n).map(Model.make)) },
            dropInputs: { objects.set(nil) })
        let identifiers = Input<[String]>()
        let retrieve = Workload(
            name: "\(name): retrieve \(short(n)) by identifier, shuffled", unit: "objects/s", runs: sizes.readRuns,
            setup: { try build($0) },
            timed: { contender in
                let models = contender.models
                for id in try identifiers.get() {
                    guard try models.retrieve(Model.self, id: id) != nil else { throw BenchFailure("\(id) not found") }
                }
                return n
            },
            verify: verifySample,
            prepareInputs: {
                var rng = SplitMix64(seed: BenchData.seed)
                var ids = (0..<n).map { Model.make($0).id }
                ids.shuffle(using: &rng)
                identifiers.set(ids)
            },
            dropInputs: { identifiers.set(nil) })
        let retrieveAll = Workload(
            name: "\(name): retrieveAll \(short(n))", unit: "objects/s", runs: sizes.readRuns,
            setup: { try build($0) },
            timed: { contender in
                let count = try contender.models.retrieveAll(Model.self).count
                try expect(count == n, "retrieved \(count) of \(n)")
                return n
            })
        return [parkAll, retrieve, retrieveAll]
    }

    /// The average size of the model's JSON from JSONEncoder, over 100 objects.
    private func jsonBytes<Model: BenchModel>(_: Model.Type) -> Int {
        let encoder = ModelCoders().encoder(for: Model.self)
        let total = (0..<100).reduce(0) { $0 + ((try? encoder.encode(Model.make($1)))?.count ?? 0) }
        return total / 100
    }
}

extension Contender {
    /// The implementation's side of the model rows (every implementation has one).
    var models: any ModelContender {
        guard let models = self as? any ModelContender else { preconditionFailure("\(Self.self) has no model rows") }
        return models
    }
}
