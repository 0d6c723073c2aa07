import Foundation
import GarageLiteCore

// Typed settings: a key's value read, set, removed and observed, each a row of its own
// (`GarageLite.Setting`, the key's id) parked, retrieved, deleted and observed through the
// garage's own entry points, synchronous or `async`.
extension Garage {
    // MARK: - Reading

    /// The value of `key`: the one stored, or the key's default when none is.
    ///
    /// ```swift
    /// let volume = try garage.value(for: Player.volume)     // 0.5 until one is set
    /// ```
    ///
    /// Inside a transaction, or with autosave off, it reads the changes not committed yet, as
    /// ``retrieve(_:identifier:)-1mhtr`` does.
    ///
    /// - throws: ``SettingsError/valueMismatch(key:valueType:reason:)`` when the stored value
    ///   can't be read as `V` (never the default instead); the errors of
    ///   ``retrieve(_:identifier:)-1mhtr`` (a failed decryption, a busy store).
    public func value<N, V>(for key: SettingsKey<N, V>) throws -> V {
        try run(storedValue(key.setting)) ?? key.defaultValue
    }

    /// The value of `key` (see ``value(for:)-2fq5g``), without blocking the calling thread.
    public nonisolated(nonsending) func value<N, V>(for key: SettingsKey<N, V>) async throws -> V {
        try await run(storedValue(key.setting)) ?? key.defaultValue
    }

    /// The value stored for `setting`, `nil` when none is (a stored `nil` is `.some(nil)`).
    func storedValue<V>(_ setting: SettingCoding<V>) -> StoreCall<V?> {
        storedValue(setting.storedType, setting)
    }

    /// The value stored for `setting`, its row read as `S`.
    private func storedValue<S: StoredSettingValue, V>(_ type: S.Type, _ setting: SettingCoding<V>) -> StoreCall<V?> {
        readingSetting(S.self, setting.id, as: Identity.displayName(V.self)).map { try $0.map(setting.value(of:)) }
    }

    /// The row of the setting `id`, read as `S`; a row whose JSON is not an `S` is reported as
    /// not a `valueType`, naming the key.
    func readingSetting<S: Decodable & SendableMetatype>(_ type: S.Type, _ id: String, as valueType: String) -> StoreCall<S?> {
        StoreCall.starting { StoreCall(try retrieving(S.self, identifier: id)) }.catching { error in
            guard let error = error as? DecodingError else { throw error }
            throw SettingsError.mismatch(id, valueType, error)
        }
    }

    // MARK: - Setting

    /// Stores `value` as the value of `key`, after the key's transform, replacing the one
    /// stored.
    ///
    /// ```swift
    /// try garage.set(0.8, for: Player.volume)
    /// try garage.set(nil, for: Player.lastSong)     // stores nil: not the same as removeValue
    /// ```
    ///
    /// The `willSet` hooks of the key's namespaces run first (``SettingsNamespace``), and
    /// cancel the change by throwing; the `didSet` hooks after the write: committed when autosave
    /// is on and no transaction is open, otherwise when the change has joined the transaction
    /// or the unsaved changes. Inside ``transaction(_:)-4nq2j`` the value is written, or rolled
    /// back, with the transaction's other changes.
    ///
    /// - throws: The error of a `willSet` hook, or of the key's transformer; the errors of
    ///   ``park(_:identifier:)-7mhtc``. When it throws, nothing was written.
    public func set<N, V>(_ value: V, for key: SettingsKey<N, V>) throws {
        try run(setting(value, key.setting))
    }

    /// Stores `value` as the value of `key` (see ``set(_:for:)-5ws8a``) without blocking the
    /// calling thread. The hooks run on the calling task.
    public nonisolated(nonsending) func set<N, V>(_ value: V, for key: SettingsKey<N, V>) async throws {
        try await run(setting(value, key.setting))
    }

    /// Stores `value` for `setting`, between its hooks.
    func setting<V>(_ value: V, _ setting: SettingCoding<V>) -> StoreCall<Void> {
        .starting {
            let change = SettingsChange(keyID: setting.id, kind: .set)
            try setting.willChange(change, in: self)
            return parking(try setting.row(for: value), identifier: setting.id).map { _ in setting.didChange(change, in: self) }
        }
    }

    /// Stores `value` for `setting` unless a value is stored (by this garage, another, or
    /// another process: the check and the write are one transaction); returns the value
    /// stored then. Hooks run as for a set, `didSet` only when `value` was written.
    func settingFirst<V>(_ value: V, _ setting: SettingCoding<V>) -> StoreCall<V> {
        .starting {
            let change = SettingsChange(keyID: setting.id, kind: .set)
            try setting.willChange(change, in: self)
            let row = try setting.row(for: value)
            return parking(row.first, identifier: setting.id).map { _ in
                setting.didChange(change, in: self)
                return try setting.value(of: row)
            }.catching { error in
                guard case GarageError.staleObject = error else { throw error }
                return self.storedValue(setting).map { try $0 ?? setting.value(of: row) }
            }
        }
    }

    // MARK: - Updating

    /// Sets the value of `key` to what `update` makes of its value (its default when none is
    /// stored), atomically: if another task, garage or process writes the key in between, the
    /// value is read again and `update` runs again. Returns the value stored.
    ///
    /// ```swift
    /// let launches = try garage.updateValue(for: App.launchCount) { $0 + 1 }
    /// ```
    ///
    /// A read then a set, even inside ``transaction(_:)-4nq2j``, can lose a concurrent write
    /// (each reads the same value, and the last set wins): use this for counters and other
    /// values made from the one stored. `update` may run more than once; it should do nothing
    /// but compute the value. The hooks run as for ``set(_:for:)-5ws8a``, once. Inside a
    /// transaction, or with autosave off, the write joins them, and is checked against the
    /// value read when it does, not again when they commit.
    ///
    /// - throws: The errors of `update`, of the hooks and of ``set(_:for:)-5ws8a``;
    ///   ``SettingsError/valueMismatch(key:valueType:reason:)`` for a stored value that can't be
    ///   read as `V`. When it throws, nothing was written.
    @discardableResult
    public func updateValue<N, V>(for key: SettingsKey<N, V>, _ update: (V) throws -> V) throws -> V {
        try withoutActuallyEscaping(update) { try run(updatingValue(for: key, $0)) }
    }

    /// Sets the value of `key` to what `update` makes of it, atomically (see
    /// ``updateValue(for:_:)-3gyy0``), without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func updateValue<N, V>(
        for key: SettingsKey<N, V>, _ update: (V) throws -> V
    ) async throws -> V {
        nonisolated(nonsending) func updating(_ update: @escaping (V) throws -> V) async throws -> V {
            try await run(updatingValue(for: key, update))
        }
        return try await withoutActuallyEscaping(update, do: updating)
    }

    /// Reads the value of `key`, stores what `update` makes of it unless the key was written
    /// meanwhile, and tries again then, up to ``settingsUpdateAttempts`` times; the hooks run once.
    private func updatingValue<N, V>(for key: SettingsKey<N, V>, _ update: @escaping (V) throws -> V) -> StoreCall<V> {
        let setting = key.setting
        return .starting {
            let change = SettingsChange(keyID: setting.id, kind: .set)
            try setting.willChange(change, in: self)
            return updatingValue(for: key, update, attempt: 1).map { value in
                setting.didChange(change, in: self)
                return setting.transform?(value) ?? value
            }
        }
    }

    /// One attempt of ``updatingValue(for:_:)``; returns the value it stored.
    private func updatingValue<N, V>(for key: SettingsKey<N, V>, _ update: @escaping (V) throws -> V, attempt: Int) -> StoreCall<V> {
        let setting = key.setting
        return revisionedValue(setting.revisionedType, setting).then { current, revision in
            let value = try update(current ?? key.defaultValue)
            return self.parking(try setting.revisionedRow(for: value, revision: revision), identifier: setting.id).map { _ in value }
                .catching { error in
                    guard case GarageError.staleObject = error, attempt < Self.settingsUpdateAttempts else { throw error }
                    return self.updatingValue(for: key, update, attempt: attempt + 1) // written meanwhile: read it again
                }
        }
    }

    /// How many times ``updateValue(for:_:)-3gyy0`` reads and writes a key written meanwhile
    /// before it gives up, throwing ``GarageError/staleObject(typeName:identifier:parkedRevision:storedRevision:)``.
    static let settingsUpdateAttempts = 1_000

    /// The value stored for `setting` (`nil` when none is) and its row's revision (0 then),
    /// read in one snapshot.
    private func revisionedValue<R: RevisionedSettingValue, V>(
        _ type: R.Type, _ setting: SettingCoding<V>
    ) -> StoreCall<(value: V?, revision: Int64)> {
        readingSetting(R.self, setting.id, as: Identity.displayName(V.self)).map { row in
                guard let row else { return (nil, 0) }
                return (try setting.value(ofRevisioned: row), row.revision)
            }
    }

    // MARK: - Removing

    /// Removes the value stored for `key`, which reads its default again; returns whether one
    /// was stored.
    ///
    /// ```swift
    /// try garage.removeValue(for: Player.volume)
    /// try garage.value(for: Player.volume)          // 0.5, the default
    /// ```
    ///
    /// The `willSet` hooks of the key's namespaces run first, whether a value is stored or
    /// not, and cancel the removal by throwing; the `didSet` hooks run after it when a value
    /// was removed (see ``set(_:for:)-5ws8a`` for when).
    ///
    /// - throws: The error of a `willSet` hook; the errors of
    ///   ``delete(_:identifier:rule:)-14x5x``. When it throws, nothing was removed.
    @discardableResult
    public func removeValue<N, V>(for key: SettingsKey<N, V>) throws -> Bool {
        try run(removingValue(key.setting))
    }

    /// Removes the value stored for `key` (see ``removeValue(for:)-4i61z``) without blocking
    /// the calling thread.
    @discardableResult
    public nonisolated(nonsending) func removeValue<N, V>(for key: SettingsKey<N, V>) async throws -> Bool {
        try await run(removingValue(key.setting))
    }

    /// Removes the value of `setting`, between its hooks; returns whether one was stored.
    func removingValue<V>(_ setting: SettingCoding<V>) -> StoreCall<Bool> {
        .starting {
            let change = SettingsChange(keyID: setting.id, kind: .removal)
            try setting.willChange(change, in: self)
            return deleting(setting.storedType, identifier: setting.id).map { removed in
                if removed { setting.didChange(change, in: self) }
                return removed
            }
        }
    }

    /// Whether a value is stored under the setting id `identifier`, whatever its type (it is
    /// not read).
    func hasSetting<S: StoredSettingValue>(_ type: S.Type, identifier: String) -> StoreCall<Bool> {
        .starting {
            StoreCall(readingMetadata(ObjectKey(typeName: try storedTypeName(S.self), identifier: identifier))).map { $0 != nil }
        }
    }

    // MARK: - Observing

    /// The updates of `key` after each commit that changed it: the value stored, or
    /// ``SettingsUpdate/removed`` when it was removed (the key then reads its default).
    ///
    /// ```swift
    /// for try await update in garage.updates(for: Player.volume) {
    ///     switch update {
    ///     case .persisted(let volume): player.volume = volume
    ///     case .removed: player.volume = Player.volume.defaultValue
    ///     }
    /// }
    /// ```
    ///
    /// Built on ``changes(to:identifier:)``: the commits of this garage, of other garages and
    /// of other processes on the same file are reported (those made elsewhere a few tens of
    /// milliseconds after them), from the moment this is called; a value is reported once,
    /// the latest of a burst read late; a change inside a transaction is reported when it
    /// commits, not if it rolls back. The current value is not reported: read it with
    /// ``value(for:)-2fq5g``. The sequence ends when the task iterating it is cancelled.
    ///
    /// Iterating throws ``SettingsError/valueMismatch(key:valueType:reason:)`` for a value stored
    /// that can't be read as `V`, and the errors of ``retrieve(_:identifier:)-1mhtr``.
    public func updates<N, V>(for key: SettingsKey<N, V>) -> SettingsUpdates<V> {
        updates(key.setting)
    }

    func updates<V>(_ setting: SettingCoding<V>) -> SettingsUpdates<V> {
        updates(setting.storedType, setting)
    }

    private func updates<S: StoredSettingValue, V>(_ type: S.Type, _ setting: SettingCoding<V>) -> SettingsUpdates<V> {
        do {
            return SettingsUpdates(try changes(to: S.self, identifier: setting.id), setting)
        } catch {
            return SettingsUpdates(failure: error)
        }
    }
}
