import ArgumentParser
import Foundation
import GarageLite

/// `garage`: looks inside a GarageLite store, checks it, repairs it and moves its objects,
/// without the app's Swift types.
@main
struct GarageTool: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "garage",
        abstract: "Look inside, check, repair and move a GarageLite store.",
        discussion: """
            A store is the SQLite file a Garage writes (Garage(path:), Garage(named:)). Commands that \
            read open it read-only and never change it (SQLite may leave its -shm and -wal files \
            beside it, as it does for any reader); those that write say so. A store can also be a \
            PostgreSQL garage, named by its URL (postgres://user@host:port/database?schema=garage, \
            sslmode=disable|prefer|require): every command takes it where it takes a file, and \
            opening a schema that does not exist creates it.

            An encrypted store needs its key. Give it in a file (--key-file PATH) or in the environment \
            variable GARAGE_KEY, never on the command line: the text is the store's passphrase, or \
            "base64:" followed by a 32-byte key in base64. A trailing newline in a file is ignored.

            Commands that read take --json, for scripts. Work that lasts over a second shows its \
            progress on standard error when it is a terminal.

            EXIT STATUS
              0   success
              1   `check` found problems
              3   no store at the path
              4   the file is not a GarageLite (or GarageStorage) store
              5   the store was written by a newer GarageLite
              6   the store's key is missing or wrong, or an object doesn't decrypt
              7   the store is damaged (run `garage check`)
              8   `import` refused its input (the message names the line)
              9   no such object
              10  any other failure (the store is busy, read-only, full...)
              64  the command line is wrong
            """,
        version: "0.1.0",
        subcommands: [
            Stats.self, ListObjects.self, Show.self, Check.self, CollectGarbage.self, Export.self, Import.self,
            RenameType.self, ImportGarageStorage.self, Rekey.self, SyncServerCommands.self,
        ])
}
