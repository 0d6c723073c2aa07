import ArgumentParser
import Foundation
import GarageLite

/// How the tool ends when something failed: a message on standard error and an exit status
/// that says what kind of failure it was (see the EXIT STATUS of `garage --help`).
struct Failure: Error, CustomStringConvertible {
    enum Kind: Int32 {
        case problemsFound = 1
        case missingStore = 3
        case notAStore = 4
        case newerFormat = 5
        case key = 6
        case damagedStore = 7
        case refusedInput = 8
        case notFound = 9
        case other = 10
    }

    var kind: Kind
    var message: String

    var description: String { message }

    /// The failure for an error the library (or anything else) threw, with its message.
    init(_ error: any Error) {
        if let failure = error as? Failure {
            self = failure
            return
        }
        message = (error as? GarageError).map { error in
            [error.description, error.recoverySuggestion].compactMap { $0 }.joined(separator: "\n")
        } ?? String(describing: error)
        if case .encryptionKeyRequired? = error as? GarageError {
            message += "\nGive garage the store's key: --key-file PATH (a passphrase, or base64:KEY), or GARAGE_KEY."
        }
        switch error as? GarageError {
        case .notAGarageStore?, .notAGarageStorageStore?: kind = .notAStore
        case .newerFormatVersion?: kind = .newerFormat
        case .encryptionKeyRequired?, .wrongEncryptionKey?, .invalidEncryptionKey?, .missingEncryptionDelegate?,
             .decryptionFailed?, .staleEncryptionKey?, .unencryptedRow?:
            kind = .key
        case .damagedStore?, .corruptData?, .storageDataIsNil?: kind = .damagedStore
        case .failedToRetrieveObject?: kind = .notFound
        default: kind = .other
        }
    }

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}

extension ParsableCommand {
    /// Runs `body`, turning what it throws into a message on standard error and the exit status
    /// of its kind.
    func reportingFailures(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as ExitCode {
            throw error
        } catch {
            let failure = Failure(error)
            Output.error("garage: " + failure.message)
            throw ExitCode(failure.kind.rawValue)
        }
    }
}
