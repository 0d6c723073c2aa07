import Foundation

// The reports of `Garage.check()` and `Garage.collectGarbage()`.

/// What ``Garage/check(maximumProblems:)-3x71a`` found: a list of problems, each naming what is
/// wrong and what to do.
///
/// ```swift
/// let report = try garage.check()
/// for case .danglingReference(let type, let identifier, _, _) in report.problems {
///     repair(type, identifier)
/// }
/// ```
public struct IntegrityReport: Sendable, Equatable, CustomStringConvertible {
    /// One thing wrong with the store.
    public enum Problem: Sendable, Equatable, CustomStringConvertible {
        /// SQLite found the file damaged: a line of its `integrity_check`, or the error a check
        /// of the rows failed with because of the damage; or a field of the file's header that
        /// SQLite would misread (the reason an open of the file throws
        /// ``GarageError/damagedStore(path:operation:reason:)`` with), naming its byte.
        case sqlite(String)
        /// The row's data is not valid JSON (it is not encrypted): retrieving the object throws
        /// ``GarageError/corruptData(typeName:identifier:reason:)``.
        case invalidJSON(typeName: String, identifier: String, reason: String)
        /// The row's list of references is not a JSON array of `["Type", "identifier"]` pairs:
        /// its references can't be checked, and ``Garage/collectGarbage(dryRun:)-1yt3b`` refuses to run.
        case invalidReferenceList(typeName: String, identifier: String, reason: String)
        /// The object references `toType(toIdentifier)`, and no object of any type is parked
        /// under that identifier.
        case danglingReference(fromType: String, fromIdentifier: String, toType: String, toIdentifier: String)
        /// The object references `toType(toIdentifier)`, which is not parked, while objects of
        /// `foundTypes` are parked under that identifier: what a type renamed without
        /// ``Garage/migrateAll(fromOldClassName:to:)-73yt5`` leaves behind. (A parent's JSON holds only
        /// the identifier of what it references; the type is in the row's list of references.)
        case wrongTypeReference(fromType: String, fromIdentifier: String, toType: String, toIdentifier: String,
                                foundTypes: [String])
        /// The row can't be read with the garage's ``Garage/dataEncryptionDelegate``: it doesn't
        /// decrypt (encrypted for another row or with another key, or altered), or its decrypted
        /// JSON is invalid, or it is stored unencrypted in a garage whose delegate binds its
        /// rows. `reason` is the error retrieving it throws. Checked only when a delegate is set.
        case unreadableEncryptedRow(typeName: String, identifier: String, reason: String)

        package var isSQLite: Bool {
            if case .sqlite = self { return true }
            return false
        }

        /// What is wrong, and what to do about it.
        public var description: String {
            switch self {
            case let .sqlite(message):
                return "SQLite reports damage in the store file: \(message). Stop writing to it, and restore "
                    + "it from a backup; without one, copy what can still be read into a new store (for "
                    + "example with the sqlite3 tool's .recover command)."
            case let .invalidJSON(type, identifier, reason):
                return "The data of \(type)(\(identifier)) is not valid JSON (\(reason)): retrieving it throws. "
                    + "Park the object again, or delete it."
            case let .invalidReferenceList(type, identifier, reason):
                return "The list of references of \(type)(\(identifier)) is unusable (\(reason)): its "
                    + "references can't be checked and garbage can't be collected. Park the object again, "
                    + "or delete it."
            case let .danglingReference(fromType, fromIdentifier, toType, toIdentifier):
                return "\(fromType)(\(fromIdentifier)) references \(toType)(\(toIdentifier)), which is not "
                    + "parked: retrieving \(fromType)(\(fromIdentifier)) gives nil for an optional reference "
                    + "and throws for a required one. Park \(toType)(\(toIdentifier)) again, or park "
                    + "\(fromType)(\(fromIdentifier)) again without it."
            case let .unreadableEncryptedRow(type, identifier, reason):
                return "\(type)(\(identifier)) can't be read with the garage's encryption: \(reason)"
            case let .wrongTypeReference(fromType, fromIdentifier, toType, toIdentifier, foundTypes):
                let found = foundTypes.first ?? "?"
                return "\(fromType)(\(fromIdentifier)) references \(toType)(\(toIdentifier)), which is not "
                    + "parked, but \(toIdentifier) is parked as \(foundTypes.joined(separator: ", ")). If your "
                    + "type is now named \(found), run migrateAll(fromOldClassName: \"\(toType)\", to: "
                    + "\(found).self), which rewrites the references; if it is still \(toType), move the objects "
                    + "back with migrateAll(fromOldClassName: \"\(found)\", to: \(toType).self). Otherwise "
                    + "park \(toType)(\(toIdentifier)) again, or park \(fromType)(\(fromIdentifier)) again "
                    + "without it."
            }
        }
    }

    /// The problems found, in the order of the checks: SQLite's, reference lists, JSON data,
    /// references, then (with an encryption delegate) the rows that don't decrypt; within a
    /// check, by type name and identifier.
    public var problems: [Problem]
    /// Whether there were more problems than the list holds.
    public var isTruncated: Bool

    /// Whether no problem was found.
    public var isOK: Bool { problems.isEmpty }

    /// A report of `problems`; a sound store's has none.
    public init(problems: [Problem], isTruncated: Bool = false) {
        self.problems = problems
        self.isTruncated = isTruncated
    }

    package init(_ found: (problems: [Problem], isTruncated: Bool)) {
        self.init(problems: found.problems, isTruncated: found.isTruncated)
    }

    /// Whether the storage checked its own file (SQLite does; a server's files are its own).
    /// Only the description says it: two reports of the same problems are equal.
    package var checkedItsFile = true

    /// Whether both reports list the same problems, and are both truncated or not.
    public static func == (lhs: IntegrityReport, rhs: IntegrityReport) -> Bool {
        lhs.problems == rhs.problems && lhs.isTruncated == rhs.isTruncated
    }

    /// A summary line, then one line per problem.
    public var description: String {
        if isOK {
            guard checkedItsFile else {
                return "The store is sound: every unencrypted object is valid JSON, every reference leads to a "
                    + "parked object, and every object's row was read without an error. The database's own files "
                    + "were not checked (its server's tools check them: pg_amcheck on PostgreSQL)."
            }
            return "The store is sound: every unencrypted object is valid JSON, every reference leads to a "
                + "parked object, and the storage reports no damage (SQLite checks its file)."
        }
        let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        let header = isTruncated
            ? "The store has more problems than listed; the first \(count):"
            : "The store has \(count):"
        return ([header] + problems.map { "- \($0)" }).joined(separator: "\n")
    }
}

/// What ``Garage/collectGarbage(dryRun:)-1yt3b`` found, or deleted: the objects no longer reachable
/// from any directly parked object.
public struct GarbageReport: Sendable, Equatable, CustomStringConvertible {
    /// Whether this was a dry run, which deleted nothing.
    public var isDryRun: Bool
    /// The unreachable objects, by type name and identifier: deleted, or, in a dry run, those
    /// the real run would delete if nothing changed meanwhile.
    public var objects: [ObjectKey]

    /// How many objects were (or would be) deleted.
    public var count: Int { objects.count }

    /// A report of `objects`, deleted or, when `isDryRun`, to delete.
    public init(isDryRun: Bool, objects: [ObjectKey]) {
        self.isDryRun = isDryRun
        self.objects = objects
    }

    /// How many objects, and which.
    public var description: String {
        if objects.isEmpty {
            return "No unreachable objects: nothing " + (isDryRun ? "to delete." : "was deleted.")
        }
        let count = objects.count == 1 ? "1 unreachable object" : "\(objects.count) unreachable objects"
        // A store that grew for years may hold many: the list is in `objects`.
        var listed = objects.prefix(20).map(\.description).joined(separator: ", ")
        if objects.count > 20 { listed += " and \(objects.count - 20) more" }
        return isDryRun
            ? "Dry run: \(count) would be deleted: \(listed). Run collectGarbage(dryRun: false) to delete them."
            : "Deleted \(count): \(listed)."
    }
}
