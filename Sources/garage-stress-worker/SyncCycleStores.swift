// The sync cycle's two garages, on SQLite or PostgreSQL, and what a process does when the
// PostgreSQL server restarts under it (PostgresStressTests' test restarts it once, mid-run).
//
// On SQLite the store is the file `<store-path>` and the server the file `<store-path>.server`.
// With the two URL arguments of a sync role, both are schemas of a PostgreSQL database (the
// files of the run, its log, lock, stop and restart marker, stay next to `<store-path>`).
//
// A call that a restart interrupts throws `GarageError.connectionLost` (the connection lost, or
// the server not reachable yet; a write whose commit was sent may have committed, as the error
// says), or `storageFailure` whose reason names PostgreSQL (the server shutting down answered
// the statement with an error), and the garage's next calls connect again. Such a failure is
// expected only once the test said that it restarts the server (it creates
// `<store-path>.restart` first): the process prints `RESTART <who> <call>: <error>`, finds out
// what it needs to (an editor reads its document back), and goes on. Any other failure, and
// this one before the marker exists, is still an error: `storeBusy` too, which a restart does
// not cause (its sessions end, and their locks with them) but a deadlock does.
import Foundation
import GarageLite
import GarageLitePostgres
import GarageStressModels

extension SyncFiles {
    /// Opens the local store: the file, or the PostgreSQL schema of `storeURL`.
    func openStore() throws -> Garage {
        try Self.open(path: store, url: storeURL)
    }

    /// Opens the fake server's store: the file, or the PostgreSQL schema of `serverURL`.
    func openServer() throws -> Garage {
        try Self.open(path: server, url: serverURL)
    }

    private static func open(path: String, url: String?) throws -> Garage {
        guard let url else { return try TestStores.open(path: path) }
        var options = PostgresGarageOptions()
        options.busyTimeout = 30
        // A process holds two garages: a few connections each are plenty.
        options.maximumConnections = 2
        return try Garage(postgresURL: url, options: options)
    }

    /// Whether the test has begun restarting the PostgreSQL server (it may have finished).
    var isRestarting: Bool { FileManager.default.fileExists(atPath: restart) }
}

/// What one process tolerates of a restart of the PostgreSQL server, and how it carries on.
final class ServerRestarts {
    private let files: SyncFiles
    private let who: String
    /// How long one call may keep failing by the restart before its failure is an error.
    private let patience: TimeInterval = 60
    /// How many calls the restart failed in this process.
    private(set) var failures = 0

    init(files: SyncFiles, who: String) {
        self.files = files
        self.who = who
    }

    /// Whether `error` is what a restart makes of a call it interrupts (or of an opening while
    /// the server is down), and the test has begun a restart.
    func isExpected(_ error: any Error) -> Bool {
        guard files.isRestarting, let error = error as? GarageError else { return false }
        switch error {
        case .connectionLost:
            return true
        case .storageFailure(_, let reason):
            return reason.contains("PostgreSQL")
        case .cannotOpenStore(_, let reason):
            // Refused (the server is down), or "the database system is starting up".
            return reason.contains("connection") || reason.contains("57P03")
        default:
            return false
        }
    }

    /// Runs `body` once: its result, or `nil` when the restart interrupted it (told on the
    /// output as a `RESTART` line). Any other failure is thrown.
    func attempt<T>(_ call: @autoclosure () -> String, _ body: () throws -> T) throws -> T? {
        do {
            return try body()
        } catch where isExpected(error) {
            failures += 1
            print("RESTART \(who) \(call()): \(error)")
            fflush(nil)
            return nil
        }
    }

    /// Runs `body` until the restart no longer interrupts it: for reads, and for writes that
    /// may be done twice. Throws the restart's failure after a minute of them.
    func retrying<T>(_ call: @autoclosure () -> String, _ body: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(patience)
        while true {
            if let result = try attempt(call(), body) { return result }
            if Date() > deadline {
                // The server did not come back: the next failure is thrown, not tolerated.
                return try body()
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}

/// An editor's calls through a server restart: a read is made again until it works; a park or
/// a delete the restart interrupted is followed by a read of the document, which tells whether
/// it landed (`INTERRUPTED <who> <call> <id> landed`) or not (`… again`: it is made again).
struct SyncEditorCalls {
    let garage: Garage
    let restarts: ServerRestarts
    let errors: Errors
    let name: String

    func read(_ id: String) throws -> SyncStressDocument? {
        try restarts.retrying("retrieve \(id)") { try garage.retrieve(SyncStressDocument.self, identifier: id) }
    }

    /// Parks `document`, the next version of the one at version `previous` (`nil`: deleted, or
    /// never parked), once.
    func park(_ document: SyncStressDocument, over previous: Int?) throws {
        var document = document
        while try restarts.attempt("park \(document.id) v\(document.version)", { try garage.park(document) }) == nil {
            expectNothingUnsaved()
            let current = try read(document.id)
            if current?.version == document.version {
                outcome("park", document.id, "landed")
                return
            }
            guard current?.version == previous else {
                errors.report("\(name): after an interrupted park of \(document.id) v\(document.version), it reads "
                              + "\(current.map { "version \($0.version)" } ?? "nothing"), not \(previous.map { "version \($0)" } ?? "nothing")")
                return
            }
            outcome("park", document.id, "again")
            // Over the document as it is now: a download may have changed its serverEdit.
            if let current { document.serverEdit = current.serverEdit }
        }
    }

    /// Deletes the document `id`, at version `version`, once.
    func delete(_ id: String, version: Int) throws {
        while true {
            if let found = try restarts.attempt("delete \(id)", { try garage.delete(SyncStressDocument.self, identifier: id) }) {
                if !found { errors.report("\(name): deleting \(id) found nothing") }
                return
            }
            expectNothingUnsaved()
            guard let current = try read(id) else {
                outcome("delete", id, "landed")
                return
            }
            guard current.version == version else {
                errors.report("\(name): after an interrupted delete of \(id) v\(version), it reads version \(current.version)")
                return
            }
            outcome("delete", id, "again")
        }
    }

    /// A failed write of an autosaving garage leaves nothing to save later.
    private func expectNothingUnsaved() {
        if garage.hasUnsavedChanges { errors.report("\(name): a write the restart interrupted left unsaved changes") }
    }

    private func outcome(_ call: String, _ id: String, _ what: String) {
        print("INTERRUPTED \(name) \(call) \(id) \(what)")
        fflush(nil)
    }
}
