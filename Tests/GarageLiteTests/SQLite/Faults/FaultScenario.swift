@testable import GarageLite
import Crypto
import FaultVFS
import Foundation
import Testing

// What the power-cut and I/O-error tests share: the fault-injecting file system (Tests/FaultVFS,
// the process's default SQLite VFS once installed, watching only an armed folder), a small
// model of graphs, a workload over every write route, and the state of a store as text, so
// that a store can be compared with the states the live garage acknowledged.

/// The fault-injecting file system, watching one folder at a time.
enum FaultFileSystem {
    /// Installs the VFS (once) and watches `directory`: an empty log, no faults.
    static func arm(_ directory: TemporaryDirectory) throws {
        let rc = faultvfs_install()
        try #require(rc == 0, "the fault VFS could not be registered (SQLite error \(rc))")
        // SQLite names files by their real path.
        let real = directory.url.resolvingSymlinksInPath().path
        faultvfs_arm(real + "/")
    }

    static func disarm() { faultvfs_disarm() }

    static var position: Int { faultvfs_log_position() }
    static func lastSync(atOrBefore position: Int) -> Int { faultvfs_last_sync(position) }

    /// The kinds of calls a fault can hit, with the error SQLite's own VFS returns for each.
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case write, sync, truncate, read
        var mask: Int32 {
            switch self {
            case .write: Int32(FAULTVFS_WRITE)
            case .sync: Int32(FAULTVFS_SYNC)
            case .truncate: Int32(FAULTVFS_TRUNCATE)
            case .read: Int32(FAULTVFS_READ)
            }
        }
        var ioError: Int32 {
            switch self {
            case .write: 778      // SQLITE_IOERR_WRITE
            case .sync: 1034      // SQLITE_IOERR_FSYNC
            case .truncate: 1546  // SQLITE_IOERR_TRUNCATE
            case .read: 266       // SQLITE_IOERR_READ
            }
        }
        var description: String { rawValue }
    }

    static func calls(_ kind: Kind) -> Int { faultvfs_calls(kind.mask) }
    static var faults: Int { faultvfs_faults() }

    static func fail(_ kind: Kind, nth: Int, code: Int32, sticky: Bool) {
        faultvfs_fail(kind.mask, nth, code, sticky ? 1 : 0)
    }

    static func clearFaults() { faultvfs_clear_faults() }
    static func ignoreSyncs(_ ignore: Bool) { faultvfs_ignore_syncs(ignore ? 1 : 0) }

    /// Writes the watched files as a power cut after `position` events would have left them.
    @discardableResult
    static func crashImage(at position: Int, seed: UInt32, torn: Bool, into directory: TemporaryDirectory) throws -> Int {
        let written = faultvfs_crash_image(position, seed, torn ? 1 : 0, directory.url.path)
        try #require(written >= 0, "the crash image could not be written in \(directory.url.path)")
        return Int(written)
    }
}

/// The scenarios' models: a team holds its members, each an object of its own.
struct FaultMember: Codable, Identifiable, Equatable, Sendable {
    var id: String
    var team: String
    var generation: Int
}

struct FaultTeam: Codable, Identifiable, Equatable, Sendable, Syncable {
    var id: String
    var generation: Int
    var members: [FaultMember]
    var syncStatus: SyncStatus = .notSynced

    static func make(_ id: String, generation: Int, size: Int = 3) -> FaultTeam {
        FaultTeam(id: id, generation: generation, members: (0..<size).map {
            FaultMember(id: "\(id).m\($0)", team: id, generation: generation)
        }, syncStatus: .notSynced)
    }
}

/// One step of a workload: a call an app makes, acknowledged when it returns.
struct FaultStep: Sendable {
    var name: String
    var run: @Sendable (Garage) throws -> Void
}

/// The claim a workload's step took, for the step that ends it.
final class HeldClaim: Sendable {
    private let claim = Protected<Claim<FaultTeam>?>(nil)
    func take(_ garage: Garage, limit: Int) throws { try claim.write { $0 = try garage.claim(FaultTeam.self, limit: limit) } }
    func end(_ body: (Claim<FaultTeam>) throws -> Void) throws {
        try claim.write {
            guard let held = $0 else { return }
            try body(held)
            $0 = nil
        }
    }
}

enum FaultWorkload {
    /// Every write route on a few graphs, one commit a step: single parks, a parkAll, a
    /// transaction that parks and deletes, a status change, claims completed and released,
    /// downloads and a deletion the server made, a deletion, saving unsaved changes.
    static func steps() -> [FaultStep] {
        let held = HeldClaim()
        return [
            FaultStep(name: "park t1") { try $0.park(FaultTeam.make("t1", generation: 1)) },
            FaultStep(name: "park t2") { try $0.park(FaultTeam.make("t2", generation: 1)) },
            FaultStep(name: "parkAll t3…t7") { garage in
                try garage.parkAll((3...7).map { FaultTeam.make("t\($0)", generation: 1) })
            },
            FaultStep(name: "transaction: park t1 gen 2, delete t2") { garage in
                try garage.transaction {
                    try garage.park(FaultTeam.make("t1", generation: 2, size: 4))
                    try garage.delete(FaultTeam.make("t2", generation: 1))
                }
            },
            FaultStep(name: "setSyncStatus t3 .synced") { try $0.setSyncStatus(.synced, for: FaultTeam.make("t3", generation: 1)) },
            // Claims take every team, so that what they take doesn't depend on the order of
            // the modification dates (a step retried after a fault changes it).
            FaultStep(name: "claim the teams") { try held.take($0, limit: 100) },
            FaultStep(name: "complete the claim") { garage in try held.end { try garage.complete($0) } },
            FaultStep(name: "park t3 gen 2") { try $0.park(FaultTeam.make("t3", generation: 2)) },
            FaultStep(name: "claim the teams again") { try held.take($0, limit: 100) },
            FaultStep(name: "release the claim") { garage in try held.end { try garage.release($0) } },
            FaultStep(name: "parkDownloaded t8, t4 gen 3") { garage in
                try garage.parkDownloaded([FaultTeam.make("t8", generation: 1), FaultTeam.make("t4", generation: 3)])
            },
            FaultStep(name: "deleteDownloaded t5") { garage in
                try garage.deleteDownloaded(FaultTeam.self, identifiers: ["t5"])
            },
            FaultStep(name: "delete t6") { try $0.delete(FaultTeam.make("t6", generation: 1)) },
            FaultStep(name: "unsaved parks of t9 and t7 gen 2, save") { garage in
                garage.isAutosaveEnabled = false
                defer { garage.isAutosaveEnabled = true }
                try garage.park(FaultTeam.make("t9", generation: 1))
                try garage.park(FaultTeam.make("t7", generation: 2, size: 2))
                try garage.save()
            },
            FaultStep(name: "parkAll 40 teams") { garage in
                try garage.parkAll((10..<50).map { FaultTeam.make("t\($0)", generation: 1, size: 2) })
            },
            // `Garage.streamingThreshold` objects: a parkAll this large encodes while the store's
            // writer inserts.
            FaultStep(name: "parkAll 1,000 teams, streamed") { garage in
                try garage.parkAll((0..<Garage.streamingThreshold).map { FaultTeam.make("s\($0)", generation: 1, size: 0) })
            },
            FaultStep(name: "delete t10…t19") { garage in
                try garage.transaction {
                    for index in 10..<20 { try garage.delete(FaultTeam.make("t\(index)", generation: 1, size: 2)) }
                }
            },
            FaultStep(name: "collect garbage") { try $0.collectGarbage(dryRun: false) },
            FaultStep(name: "importRecords") { garage in
                try garage.importRecords((1...3).map {
                    ObjectRecord(key: ObjectKey(typeName: "FaultNote", identifier: "n\($0)"), json: #"{"id":"n\#($0)"}"#)
                })
            },
            // Rewrites every object in batches, then compacts the file and truncates the log.
            FaultStep(name: "rekey") { try $0.rekey(to: secondKey) },
        ]
    }

    /// The key the workload's store is opened with, and the one it is rekeyed to.
    static let firstKey = StoreKey.key(SymmetricKey(data: Data(repeating: 1, count: 32)))
    static let secondKey = StoreKey.key(SymmetricKey(data: Data(repeating: 2, count: 32)))

    /// Opens the workload's store at `path` with whichever of its keys it takes.
    static func open(_ path: String) throws -> Garage {
        do {
            return try Garage(path: path, encryptionKey: secondKey)
        } catch GarageError.wrongEncryptionKey {
            return try Garage(path: path, encryptionKey: firstKey)
        }
    }

    /// The store's objects and their statuses as text, one line an object, sorted: what the
    /// tests compare. A team is read with its members, so a torn graph fails to read or shows.
    static func state(of garage: Garage) throws -> String {
        try lines(of: garage).joined(separator: "\n")
    }

    /// How `state` differs from `expected`: the lines only it has (+), and those it lacks (-).
    static func difference(_ state: String, from expected: String) -> String {
        let have = Set(state.split(separator: "\n")), want = Set(expected.split(separator: "\n"))
        let lines = have.subtracting(want).sorted().map { "+ \($0)" } + want.subtracting(have).sorted().map { "- \($0)" }
        return (lines.prefix(12) + (lines.count > 12 ? ["… \(lines.count - 12) more"] : [])).joined(separator: "\n")
    }

    private static func lines(of garage: Garage) throws -> [String] {
        var lines: [String] = []
        for team in try garage.retrieveAll(FaultTeam.self) {
            let status = try garage.metadata(FaultTeam.self, identifier: team.id)?.syncStatus
            let members = team.members.map { "\($0.id)@\($0.generation)" }.joined(separator: ",")
            lines.append("team \(team.id)@\(team.generation) [\(members)] \(status.map { "\($0)" } ?? "?")")
        }
        for member in try garage.retrieveAll(FaultMember.self) {
            lines.append("member \(member.id)@\(member.generation)")
        }
        // What the imports wrote, as records.
        for record in try garage.records() where record.typeName != "FaultTeam" && record.typeName != "FaultMember" {
            lines.append("record \(record.typeName) \(record.identifier) r\(record.revision) \(record.syncStatus)\(record.isDeleted ? " deleted" : "")")
        }
        return lines.sorted()
    }
}
