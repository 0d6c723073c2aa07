import Foundation
import GarageLiteCore

// Objects by key and JSON, for the package's sync server (GarageLiteServer), which serves a
// store's types as records when it has no Swift type for them (`garage-server`). Parks and
// deletes go through the same calls as the typed ones (revisions, dates, the delete rule,
// transactions, encryption); the JSON is read as records read it.
extension Garage {
    /// Parks `json`, a JSON object, as the object `key`, referencing nothing.
    ///
    /// - throws: ``GarageError/invalidIdentifier(typeName:identifier:reason:)`` for an empty
    ///   type name or identifier, or one with U+0000; ``GarageError/corruptData(typeName:identifier:reason:)``
    ///   when `json` is not a JSON object, or holds U+0000; the errors of a park.
    package nonisolated(nonsending) func parkJSON(_ json: String, as key: ObjectKey) async throws {
        _ = try await run(parking(children: .refuseStale) { graph in
            try graph.encodeRoot(json: json, key: key)
            return [key]
        })
    }

    /// The JSON of the object `key` as the store holds it (decrypted), or `nil` when there is
    /// none (or only its tombstone).
    package nonisolated(nonsending) func json(of key: ObjectKey) async throws -> String? {
        guard let record = try await record(key), !record.isDeleted else { return nil }
        return record.json
    }

    /// Deletes the object `key` with the garage's ``deleteRule``; returns whether there was one.
    package nonisolated(nonsending) func deleteObject(_ key: ObjectKey) async throws -> Bool {
        try await run(deleting(.object(key, mustExist: false, revision: nil), rule: deleteRule)) > 0
    }
}
