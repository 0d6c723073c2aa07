import Foundation
import GarageLiteCore

/// A move of a setting's value from a legacy key to a new one, converting it: run with
/// ``Garage/migrate(_:)-n30c``.
///
/// ```swift
/// enum City: String, Codable, Sendable { case paris, tokyo }
/// let city = SettingsKey<Travel, City?>(id: "city", defaultValue: nil)
///
/// try garage.migrate([
///     SettingsMigration(to: city, from: "OldCityKey", as: String.self) { City(rawValue: $0.lowercased()) },
/// ])
/// ```
///
/// The old value is read as a setting stored under the full id `oldID` (one stored by a key of
/// that id), as `Old`. The converted value goes through the new key's transform and
/// transformer, as a set would, but no namespace hooks run: a migration moves stored data, it
/// is not a change the app makes.
public struct SettingsMigration: Sendable {
    /// The full id of the legacy key, whose value is moved.
    public let oldID: String
    /// The full id of the new key (``SettingsKey/id``).
    public let newID: String
    /// The type of the old value, for errors.
    let oldValueType: String
    let oldType: any StoredSettingValue.Type
    let newType: any StoredSettingValue.Type
    /// The new key's row for the old row: converted, transformed.
    let convert: @Sendable (any StoredSettingValue) throws -> any StoredSettingValue

    /// A move of the value stored under the full id `oldID`, of type `Old`, to `key`, converted
    /// by `convert`.
    ///
    /// - parameter key: The new key.
    /// - parameter oldID: The old key's full id, such as `"OldCityKey"` or `"player:vol"`.
    /// - parameter oldType: The type of the old value.
    /// - parameter convert: Makes the new key's value of the old one; throwing stops the
    ///   migration, which moves nothing.
    public init<N, V, Old: Codable & Sendable>(
        to key: SettingsKey<N, V>, from oldID: String, as oldType: Old.Type = Old.self,
        convert: @escaping @Sendable (Old) throws -> V
    ) {
        self.init(to: key, from: SettingCoding<Old>(id: oldID, namespaces: [], transform: nil), convert: convert)
    }

    /// A move of the value of `oldKey` to `key`, converted by `convert`: the old key's
    /// transformer reads it.
    ///
    /// ```swift
    /// try garage.migrate([SettingsMigration(to: Player.volume, from: Legacy.volumePercent) { Double($0) / 100 }])
    /// ```
    public init<N, V, OldNamespace, Old>(
        to key: SettingsKey<N, V>, from oldKey: SettingsKey<OldNamespace, Old>,
        convert: @escaping @Sendable (Old) throws -> V
    ) {
        self.init(to: key, from: oldKey.setting, convert: convert)
    }

    private init<N, V, Old>(to key: SettingsKey<N, V>, from old: SettingCoding<Old>, convert: @escaping @Sendable (Old) throws -> V) {
        let new = key.setting
        oldID = old.id
        newID = new.id
        oldValueType = Identity.displayName(Old.self)
        oldType = old.storedType
        newType = new.storedType
        self.convert = { row in try new.row(for: convert(old.value(of: row))) }
    }

    /// What a migration did.
    public enum Outcome: Sendable, Hashable {
        /// The old value, converted, is the new key's; the old one was removed.
        case moved(from: String, to: String)
        /// The new key had a value already, which was kept; the old one was removed.
        case discarded(from: String, to: String)
    }
}

extension Garage {
    /// Runs `migrations`, in order and in one transaction: each moves the value of its legacy
    /// key, if one is stored, to its new key, converted, and removes it. Returns what was
    /// done, a migration whose legacy key has no value doing nothing.
    ///
    /// ```swift
    /// try garage.migrate([
    ///     SettingsMigration(to: Player.volume, from: "volume", as: Int.self) { Double($0) / 100 },
    ///     SettingsMigration(to: Travel.city, from: "OldCityKey", as: String.self) { City(rawValue: $0) },
    /// ])
    /// ```
    ///
    /// Run it at every launch: once a value has moved, the legacy key has none, and the
    /// migration does nothing. When the new key has a value already (set since by a version
    /// that knew it), that value wins: the old one is removed without being converted.
    /// A migration sees the moves of those before it, so `a → b` then `b → c` moves a value
    /// from `a` to `c`.
    ///
    /// - throws: ``SettingsError/valueMismatch(key:valueType:reason:)`` when a legacy value can't
    ///   be read as its type; ``SettingsError/migrationOntoItself(key:)``; the error of a
    ///   conversion or transformer; the errors of ``transaction(_:)-4nq2j``. When it throws,
    ///   nothing moved.
    @discardableResult
    public func migrate(_ migrations: [SettingsMigration]) throws -> [SettingsMigration.Outcome] {
        try transaction { try run(migrating(migrations[...])) }
    }

    /// Runs `migrations` (see ``migrate(_:)-n30c``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func migrate(_ migrations: [SettingsMigration]) async throws -> [SettingsMigration.Outcome] {
        try await transaction { try await run(migrating(migrations[...])) }
    }

    /// Runs `migrations` one after the other; returns the outcomes of those that found a value
    /// to move, after `outcomes`.
    private func migrating(
        _ migrations: ArraySlice<SettingsMigration>, outcomes: [SettingsMigration.Outcome] = []
    ) -> StoreCall<[SettingsMigration.Outcome]> {
        guard let migration = migrations.first else { return .done(outcomes) }
        return migrating(migration, from: migration.oldType, to: migration.newType).then { outcome in
            self.migrating(migrations.dropFirst(), outcomes: outcomes + (outcome.map { [$0] } ?? []))
        }
    }

    private func migrating<Old: StoredSettingValue, New: StoredSettingValue>(
        _ migration: SettingsMigration, from: Old.Type, to: New.Type
    ) -> StoreCall<SettingsMigration.Outcome?> {
        guard migration.oldID != migration.newID else { return .failed(SettingsError.migrationOntoItself(key: migration.newID)) }
        return readingSetting(Old.self, migration.oldID, as: migration.oldValueType).then { old in
            guard let old else { return .done(nil) }
            return self.hasSetting(New.self, identifier: migration.newID).then { hasNew in
                // The new key's value, set since by a version that knew it, wins.
                let moving: StoreCall<SettingsMigration.Outcome> = hasNew
                    ? .done(.discarded(from: migration.oldID, to: migration.newID))
                    : self.parking(try migration.convert(old), identifier: migration.newID)
                        .map { _ in .moved(from: migration.oldID, to: migration.newID) }
                return moving.then { outcome in
                    self.deleting(Old.self, identifier: migration.oldID).map { _ in outcome }
                }
            }
        }
    }
}
