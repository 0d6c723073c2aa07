import ArgumentParser
import Foundation
import GarageLite
import GarageLiteServer

/// `garage sync-server`: what an operator does to the store of a sync server (`SyncServer`,
/// `garage-server`): its scopes, the purge of old tombstones, a forced rebase, a device's cursor.
struct SyncServerCommands: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-server",
        abstract: "Look after the store of a sync server: scopes, tombstones, rebases, cursors.",
        discussion: """
            The store is the one a SyncServer (or garage-server) keeps its objects and feeds in: a \
            file, or a PostgreSQL garage's URL. Its instances may keep serving meanwhile.
            """,
        subcommands: [Scopes.self, Purge.self, Rebase.self, Cursor.self])

    /// Runs `body` with a server on the store, waiting for it (the tool's commands are not `async`).
    static func withServer<T: Sendable>(_ store: StoreOptions, _ body: @escaping @Sendable (SyncServer) async throws -> T) throws -> T {
        let garage = try store.openForWriting()
        let server = SyncServer(garage: garage)
        let result = Protected<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body(server)) } catch { outcome = .failure(error) }
            result.write { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.read { $0! }.get()
    }

    struct Scopes: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the scopes of the feeds: objects, tombstones, last position and horizon.")

        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            try reportingFailures {
                let scopes = try SyncServerCommands.withServer(store) { try await $0.scopes() }
                if output.json { return try Output.json(scopes) }
                Output.line("scope\tobjects\ttombstones\tposition\thorizon")
                for scope in scopes {
                    Output.line("\(scope.name)\t\(scope.objects)\t\(scope.tombstones)\t\(scope.position)\t\(scope.horizon)")
                }
            }
        }
    }

    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Purge the tombstones deleted longer ago than the horizon (writes).",
            discussion: """
                Devices whose cursors are behind a purged tombstone download their scopes again at \
                their next sync (a rebase), keeping their unsynced changes.
                """)

        @OptionGroup var store: StoreOptions
        @Option(help: ArgumentHelp("How old a tombstone must be to go, in seconds.", valueName: "seconds"))
        var olderThan: Double

        func validate() throws {
            guard olderThan >= 0 else { throw ValidationError("--older-than must be 0 or more seconds") }
        }

        func run() throws {
            try reportingFailures {
                let cutoff = Date().addingTimeInterval(-olderThan)
                let purged = try SyncServerCommands.withServer(store) { try await $0.purgeTombstones(deletedBefore: cutoff) }
                Output.line("Purged \(purged) tombstones.")
            }
        }
    }

    struct Rebase: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make every device that read a scope download it again at its next sync (writes).")

        @OptionGroup var store: StoreOptions
        @Argument(help: "The scope.")
        var scope: String

        func run() throws {
            try reportingFailures {
                let scope = scope
                let horizon = try SyncServerCommands.withServer(store) { try await $0.forceRebase(of: scope) }
                Output.line("The readers of \(scope) rebase at their next download (horizon \(horizon)).")
            }
        }
    }

    struct Cursor: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what a device's download cursor says of each scope, and whether it rebases.")

        @OptionGroup var store: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: """
            The cursor, as the device keeps it: `garage show DEVICE-STORE GarageLite.Setting \
            garage-sync-engine:cursor-TYPE` prints it.
            """)
        var cursor: String

        func run() throws {
            try reportingFailures {
                let cursor = cursor
                let scopes = try SyncServerCommands.withServer(store) { try await $0.describe(cursor: cursor) }
                guard !scopes.isEmpty else {
                    throw ValidationError("""
                        the cursor names no scope: it is not a cursor of this server's feeds (a device keeps its \
                        cursors in its store: garage show DEVICE-STORE GarageLite.Setting garage-sync-engine:cursor-TYPE)
                        """)
                }
                if output.json { return try Output.json(scopes) }
                Output.line("scope\tposition\tbegan at horizon\thorizon\trebases")
                for scope in scopes {
                    Output.line("\(scope.scope)\t\(scope.position)\t\(scope.beganAtHorizon)\t\(scope.horizon)\t\(scope.rebases ? "yes" : "no")")
                }
            }
        }
    }
}
