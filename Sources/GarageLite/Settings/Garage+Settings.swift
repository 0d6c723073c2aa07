import Foundation

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
    /// ``retrieve(_:identifier:)-5uq1f`` does.
    ///
    /// - throws: ``SettingsError/valueMismatch(key:valueType:reason:)`` when the stored value
    ///   can't be read as `V` (never the default instead); the errors of
    ///   ``retrieve(_:identifier:)-5uq1f`` (a failed decryption, a busy store).
    public func value<N, V>(for key: SettingsKey<N, V>) throws -> V {
        try storedValue(key.setting) ?? key.defaultValue
    }

    /// The value of `key` (see ``value(for:)-2fq5g``), without blocking the calling thread.
    public nonisolated(nonsending) func value<N, V>(for key: SettingsKey<N, V>) async throws -> V {
        try await storedValue(key.setting) ?? key.defaultValue
    }

    /// The value stored for `setting`, `nil` when none is (a stored `nil` is `.some(nil)`).
    func storedValue<V>(_ setting: SettingCoding<V>) throws -> V? {
        try retrieveSetting(setting.storedType, setting, as: V.self).map(setting.value(of:))
    }

    /// The value stored for `setting` (see the synchronous variant), without blocking the
    /// calling thread.
    nonisolated(nonsending) func storedValue<V>(_ setting: SettingCoding<V>) async throws -> V? {
        try await retrieveSetting(setting.storedType, setting, as: V.self).map(setting.value(of:))
    }

    /// The row of the setting `setting.id`, read as `S`; a row whose JSON is not an `S` is
    /// reported as not a `V`, naming the key.
    private func retrieveSetting<S: StoredSettingValue, V>(_ type: S.Type, _ setting: SettingCoding<V>, as value: V.Type) throws -> S? {
        do {
            return try retrieve(S.self, identifier: setting.id)
        } catch let error as DecodingError {
            throw SettingsError.mismatch(setting.id, V.self, error)
        }
    }

    private nonisolated(nonsending) func retrieveSetting<S: StoredSettingValue, V>(
        _ type: S.Type, _ setting: SettingCoding<V>, as value: V.Type
    ) async throws -> S? {
        do {
            return try await retrieve(S.self, identifier: setting.id)
        } catch let error as DecodingError {
            throw SettingsError.mismatch(setting.id, V.self, error)
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
    ///   ``park(_:identifier:)-8mlg``. When it throws, nothing was written.
    public func set<N, V>(_ value: V, for key: SettingsKey<N, V>) throws {
        try set(value, key.setting)
    }

    /// Stores `value` as the value of `key` (see ``set(_:for:)-5ws8a``) without blocking the
    /// calling thread. The hooks run on the calling task.
    public nonisolated(nonsending) func set<N, V>(_ value: V, for key: SettingsKey<N, V>) async throws {
        try await set(value, key.setting)
    }

    func set<V>(_ value: V, _ setting: SettingCoding<V>) throws {
        let change = SettingsChange(keyID: setting.id, kind: .set)
        try setting.willChange(change, in: self)
        try parkSetting(setting.row(for: value), identifier: setting.id)
        setting.didChange(change, in: self)
    }

    nonisolated(nonsending) func set<V>(_ value: V, _ setting: SettingCoding<V>) async throws {
        let change = SettingsChange(keyID: setting.id, kind: .set)
        try setting.willChange(change, in: self)
        try await parkSetting(setting.row(for: value), identifier: setting.id)
        setting.didChange(change, in: self)
    }

    /// Parks a setting's row (a ``StoredSetting``, or a ``FirstStoredSetting``) under its key's id.
    func parkSetting<S: Encodable>(_ row: S, identifier: String) throws {
        try park(row, identifier: identifier)
    }

    nonisolated(nonsending) func parkSetting<S: Encodable>(_ row: S, identifier: String) async throws {
        try await park(row, identifier: identifier)
    }

    /// Stores `value` for `setting` unless a value is stored (by this garage, another, or
    /// another process: the check and the write are one transaction); returns the value
    /// stored then. Hooks run as for a set, `didSet` only when `value` was written.
    func setFirst<V>(_ value: V, _ setting: SettingCoding<V>) throws -> V {
        let change = SettingsChange(keyID: setting.id, kind: .set)
        try setting.willChange(change, in: self)
        let row = try setting.row(for: value)
        do {
            try parkSetting(row.first, identifier: setting.id)
        } catch let error as GarageError {
            guard case .staleObject = error else { throw error }
            return try storedValue(setting) ?? setting.value(of: row)
        }
        setting.didChange(change, in: self)
        return try setting.value(of: row)
    }

    nonisolated(nonsending) func setFirst<V>(_ value: V, _ setting: SettingCoding<V>) async throws -> V {
        let change = SettingsChange(keyID: setting.id, kind: .set)
        try setting.willChange(change, in: self)
        let row = try setting.row(for: value)
        do {
            try await parkSetting(row.first, identifier: setting.id)
        } catch let error as GarageError {
            guard case .staleObject = error else { throw error }
            return try await storedValue(setting) ?? setting.value(of: row)
        }
        setting.didChange(change, in: self)
        return try setting.value(of: row)
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
        let setting = key.setting
        let change = SettingsChange(keyID: setting.id, kind: .set)
        try setting.willChange(change, in: self)
        var attempt = 0
        while true {
            attempt += 1
            let (current, revision) = try revisionedValue(setting.revisionedType, setting)
            let value = try update(current ?? key.defaultValue)
            do {
                try parkSetting(setting.revisionedRow(for: value, revision: revision), identifier: setting.id)
            } catch GarageError.staleObject where attempt < Self.settingsUpdateAttempts {
                continue // written meanwhile: read it again
            }
            setting.didChange(change, in: self)
            return setting.transform?(value) ?? value
        }
    }

    /// Sets the value of `key` to what `update` makes of it, atomically (see
    /// ``updateValue(for:_:)-3gyy0``), without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func updateValue<N, V>(
        for key: SettingsKey<N, V>, _ update: (V) throws -> V
    ) async throws -> V {
        let setting = key.setting
        let change = SettingsChange(keyID: setting.id, kind: .set)
        try setting.willChange(change, in: self)
        var attempt = 0
        while true {
            attempt += 1
            let (current, revision) = try await revisionedValue(setting.revisionedType, setting)
            let value = try update(current ?? key.defaultValue)
            do {
                try await parkSetting(setting.revisionedRow(for: value, revision: revision), identifier: setting.id)
            } catch GarageError.staleObject where attempt < Self.settingsUpdateAttempts {
                continue // written meanwhile: read it again
            }
            setting.didChange(change, in: self)
            return setting.transform?(value) ?? value
        }
    }

    /// How many times ``updateValue(for:_:)-3gyy0`` reads and writes a key written meanwhile
    /// before it gives up, throwing ``GarageError/staleObject(typeName:identifier:parkedRevision:storedRevision:)``.
    static let settingsUpdateAttempts = 1_000

    /// The value stored for `setting` (`nil` when none is) and its row's revision (0 then),
    /// read in one snapshot.
    private func revisionedValue<R: RevisionedSettingValue, V>(
        _ type: R.Type, _ setting: SettingCoding<V>
    ) throws -> (value: V?, revision: Int64) {
        let row: R?
        do {
            row = try retrieve(R.self, identifier: setting.id)
        } catch let error as DecodingError {
            throw SettingsError.mismatch(setting.id, V.self, error)
        }
        guard let row else { return (nil, 0) }
        return (try setting.value(ofRevisioned: row), row.revision)
    }

    private nonisolated(nonsending) func revisionedValue<R: RevisionedSettingValue, V>(
        _ type: R.Type, _ setting: SettingCoding<V>
    ) async throws -> (value: V?, revision: Int64) {
        let row: R?
        do {
            row = try await retrieve(R.self, identifier: setting.id)
        } catch let error as DecodingError {
            throw SettingsError.mismatch(setting.id, V.self, error)
        }
        guard let row else { return (nil, 0) }
        return (try setting.value(ofRevisioned: row), row.revision)
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
    ///   ``delete(_:identifier:)-22cz2``. When it throws, nothing was removed.
    @discardableResult
    public func removeValue<N, V>(for key: SettingsKey<N, V>) throws -> Bool {
        try removeValue(key.setting)
    }

    /// Removes the value stored for `key` (see ``removeValue(for:)-4i61z``) without blocking
    /// the calling thread.
    @discardableResult
    public nonisolated(nonsending) func removeValue<N, V>(for key: SettingsKey<N, V>) async throws -> Bool {
        try await removeValue(key.setting)
    }

    func removeValue<V>(_ setting: SettingCoding<V>) throws -> Bool {
        let change = SettingsChange(keyID: setting.id, kind: .removal)
        try setting.willChange(change, in: self)
        let removed = try deleteSetting(setting.storedType, identifier: setting.id)
        if removed { setting.didChange(change, in: self) }
        return removed
    }

    nonisolated(nonsending) func removeValue<V>(_ setting: SettingCoding<V>) async throws -> Bool {
        let change = SettingsChange(keyID: setting.id, kind: .removal)
        try setting.willChange(change, in: self)
        let removed = try await deleteSetting(setting.storedType, identifier: setting.id)
        if removed { setting.didChange(change, in: self) }
        return removed
    }

    /// Deletes the setting's row, whatever the type of its value.
    func deleteSetting<S: StoredSettingValue>(_ type: S.Type, identifier: String) throws -> Bool {
        try delete(S.self, identifier: identifier)
    }

    nonisolated(nonsending) func deleteSetting<S: StoredSettingValue>(_ type: S.Type, identifier: String) async throws -> Bool {
        try await delete(S.self, identifier: identifier)
    }

    /// Whether a value is stored under the setting id `identifier`, whatever its type (it is
    /// not read).
    func hasSetting<S: StoredSettingValue>(_ type: S.Type, identifier: String) throws -> Bool {
        try metadata(S.self, identifier: identifier) != nil
    }

    nonisolated(nonsending) func hasSetting<S: StoredSettingValue>(_ type: S.Type, identifier: String) async throws -> Bool {
        try await metadata(S.self, identifier: identifier) != nil
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
    /// that can't be read as `V`, and the errors of ``retrieve(_:identifier:)-5uq1f``.
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
