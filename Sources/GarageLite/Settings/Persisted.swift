import Foundation
import GarageLiteCore

/// A property whose value is a setting in a garage: reading it reads the setting, assigning it
/// stores it.
///
/// ```swift
/// final class PlayerModel {
///     @Persisted var volume: Double
///     @Persisted var installID: UUID
///     @Persisted(id: "equalizer", in: AppGarage.shared) var equalizer = "flat"
///
///     init(garage: Garage) {
///         _volume = Persisted(Player.volume, in: garage)
///         _installID = Persisted(id: "install-id", in: garage, defaultValue: UUID(), defaultPersistence: .persistWhenNil)
///     }
/// }
///
/// model.volume = 0.8                          // stored
/// try model.$volume.persist(0.8)              // the same, with its errors
/// for try await update in model.$volume.updates { /* … */ }
/// ```
///
/// **Errors.** A property's getter and setter can't throw. Reading returns the default when
/// the setting can't be read (a stored value of another type, a failed decryption), and
/// assigning drops the error of the write (a `willSet` hook's refusal, a busy store): use the
/// projected value's ``Persister/retrieve()-7575`` and ``Persister/persist(_:)-5sd8g``, which
/// throw, where an error matters.
///
/// **Defaults.** The default is made when first needed, and once: `defaultValue:` (and the
/// initial value of `var equalizer = "flat"`) is an autoclosure. With
/// ``DefaultPersistence/persistWhenNil`` it is stored the first time it is read, so that a
/// random default (an identifier, a seed) is made once and read the same by every garage and
/// process on the file.
///
/// Each read reads the setting's row (one indexed row), so a change made elsewhere is seen at
/// the next read; ``Persister/updates`` reports them as they commit.
@propertyWrapper
public struct Persisted<Value: Sendable>: Sendable {
    /// The setting, with the operations that throw and its updates: `$volume`.
    public let projectedValue: Persister<Value>

    /// The stored value, or the default when none is stored or it can't be read; assigning
    /// stores it, dropping the errors (see ``Persister/persist(_:)-5sd8g``).
    public var wrappedValue: Value {
        get { projectedValue.valueOrDefault }
        nonmutating set { try? projectedValue.persist(newValue) }
    }

    /// The setting of `key` in `garage`: its default is the key's.
    ///
    /// ```swift
    /// @Persisted(Player.volume, in: garage) var volume: Double
    /// ```
    ///
    /// - parameter key: The setting's key, with its default, hooks and transform.
    /// - parameter garage: The garage that stores it.
    /// - parameter defaultPersistence: Whether the default is stored when first read.
    public init<N>(_ key: SettingsKey<N, Value>, in garage: Garage, defaultPersistence: DefaultPersistence = .notPersisted) {
        projectedValue = Persister(
            garage: garage, setting: key.setting, defaultValue: LazyValue { key.defaultValue },
            persistence: defaultPersistence)
    }

    /// The setting `id` of the global namespace in `garage`, whose default is the property's
    /// initial value, made when first needed.
    ///
    /// ```swift
    /// @Persisted(id: "equalizer", in: garage) var equalizer = "flat"
    /// ```
    public init(
        wrappedValue: @autoclosure @escaping @Sendable () -> Value, id: String, in garage: Garage,
        defaultPersistence: DefaultPersistence = .notPersisted
    ) where Value: Codable {
        self.init(id: id, in: garage, defaultValue: wrappedValue(), defaultPersistence: defaultPersistence)
    }

    /// The optional setting `id` of the global namespace in `garage`, `nil` until set.
    ///
    /// ```swift
    /// @Persisted(id: "last-search", in: garage) var lastSearch: String?
    /// ```
    public init<Wrapped>(
        id: String, in garage: Garage, defaultPersistence: DefaultPersistence = .notPersisted
    ) where Value == Wrapped?, Wrapped: Codable {
        self.init(id: id, in: garage, defaultValue: nil, defaultPersistence: defaultPersistence)
    }

    /// The setting `id` of the global namespace in `garage`, stored as `transformer` makes it,
    /// whose default is the property's initial value, made when first needed.
    ///
    /// ```swift
    /// @Persisted(id: "theme", in: garage, transformer: RawRepresentableTransformer()) var theme = Theme.light
    /// ```
    public init<T: Transformer>(
        wrappedValue: @autoclosure @escaping @Sendable () -> Value, id: String, in garage: Garage, transformer: T,
        defaultPersistence: DefaultPersistence = .notPersisted
    ) where T.Input == Value, T.Output: Codable & Sendable {
        self.init(id: id, in: garage, defaultValue: wrappedValue(), transformer: transformer,
                  defaultPersistence: defaultPersistence)
    }

    /// The setting `id` of the global namespace in `garage`, whose default is made when first
    /// needed.
    ///
    /// ```swift
    /// @Persisted(id: "install-id", in: garage, defaultValue: UUID(), defaultPersistence: .persistWhenNil)
    /// var installID: UUID
    /// ```
    public init(
        id: String, in garage: Garage, defaultValue: @autoclosure @escaping @Sendable () -> Value,
        defaultPersistence: DefaultPersistence = .notPersisted
    ) where Value: Codable {
        projectedValue = Persister(
            garage: garage, setting: SettingCoding(id: id, namespaces: [], transform: nil),
            defaultValue: LazyValue(defaultValue), persistence: defaultPersistence)
    }

    /// The setting `id` of the global namespace in `garage`, stored as `transformer` makes
    /// it, whose default is made when first needed.
    ///
    /// ```swift
    /// @Persisted(id: "theme", in: garage, defaultValue: .light, transformer: RawRepresentableTransformer())
    /// var theme: Theme
    /// ```
    public init<T: Transformer>(
        id: String, in garage: Garage, defaultValue: @autoclosure @escaping @Sendable () -> Value, transformer: T,
        defaultPersistence: DefaultPersistence = .notPersisted
    ) where T.Input == Value, T.Output: Codable & Sendable {
        projectedValue = Persister(
            garage: garage, setting: SettingCoding(id: id, namespaces: [], transformer: transformer, transform: nil),
            defaultValue: LazyValue(defaultValue), persistence: defaultPersistence)
    }
}

/// Whether a ``Persisted`` setting's default is stored when it is first read.
public enum DefaultPersistence: Sendable, Hashable {
    /// The default is returned, never stored: the default of a key.
    case notPersisted
    /// When nothing is stored, reading stores the default (through the key's hooks and
    /// transform) and returns it. The write stores it only if nothing was stored meanwhile, in
    /// the transaction that writes, so that two garages or processes reading a new setting at
    /// once read the same value. After a removal, the next read stores the default again.
    case persistWhenNil
}

/// A setting in a garage, with its default: the projected value of ``Persisted`` (`$volume`).
///
/// ```swift
/// try model.$volume.persist(0.8)
/// let volume = try model.$volume.retrieve()
/// try model.$volume.remove()
/// for try await update in model.$volume.updates {
///     if case .persisted(let volume) = update { player.volume = volume }
/// }
/// ```
///
/// Copies share the default, made once.
public struct Persister<Value: Sendable>: Sendable {
    /// The garage that stores the setting.
    public let garage: Garage
    let setting: SettingCoding<Value>
    private let lazyDefault: LazyValue<Value>
    /// Whether the default is stored when it is first read.
    public let defaultPersistence: DefaultPersistence

    init(garage: Garage, setting: SettingCoding<Value>, defaultValue: LazyValue<Value>, persistence: DefaultPersistence) {
        self.garage = garage
        self.setting = setting
        self.lazyDefault = defaultValue
        self.defaultPersistence = persistence
    }

    /// The setting's full id (``SettingsKey/id``).
    public var id: String { setting.id }

    /// The value the setting has while none is stored, made the first time it is needed.
    public var defaultValue: Value { lazyDefault.value }

    /// The value stored, or the default when none is (stored first with
    /// ``DefaultPersistence/persistWhenNil``).
    ///
    /// - throws: The errors of ``Garage/value(for:)-2fq5g``, and with
    ///   ``DefaultPersistence/persistWhenNil`` those of ``Garage/set(_:for:)-5ws8a``.
    public func retrieve() throws -> Value {
        try garage.run(retrieving)
    }

    /// The value stored, or the default (see ``retrieve()-7575``), without blocking the
    /// calling thread.
    public nonisolated(nonsending) func retrieve() async throws -> Value {
        try await garage.run(retrieving)
    }

    /// Reads the value stored, or the default (stored first with ``DefaultPersistence/persistWhenNil``).
    private var retrieving: StoreCall<Value> {
        garage.storedValue(setting).then { stored in
            if let stored { return .done(stored) }
            guard self.defaultPersistence == .persistWhenNil else { return .done(self.defaultValue) }
            return self.garage.settingFirst(self.defaultValue, self.setting)
        }
    }

    /// The value, or the default when it can't be read: the getter of ``Persisted``.
    var valueOrDefault: Value {
        do {
            return try retrieve()
        } catch {
            return defaultValue
        }
    }

    /// Stores `value` (see ``Garage/set(_:for:)-5ws8a``).
    public func persist(_ value: Value) throws {
        try garage.run(garage.setting(value, setting))
    }

    /// Stores `value` (see ``persist(_:)-5sd8g``) without blocking the calling thread.
    public nonisolated(nonsending) func persist(_ value: Value) async throws {
        try await garage.run(garage.setting(value, setting))
    }

    /// Removes the stored value, so that the setting reads its default (see
    /// ``Garage/removeValue(for:)-4i61z``); returns whether one was stored.
    @discardableResult
    public func remove() throws -> Bool {
        try garage.run(garage.removingValue(setting))
    }

    /// Removes the stored value (see ``remove()-9k5ps``) without blocking the calling thread.
    @discardableResult
    public nonisolated(nonsending) func remove() async throws -> Bool {
        try await garage.run(garage.removingValue(setting))
    }

    /// The updates of the setting after each commit that changed it, in this garage, another,
    /// or another process on the file (see ``Garage/updates(for:)``): the value stored, or
    /// ``SettingsUpdate/removed`` (the setting then reads ``defaultValue``).
    public var updates: SettingsUpdates<Value> {
        garage.updates(setting)
    }
}

/// A value made the first time it is needed, once: concurrent first reads wait for the one
/// that makes it.
final class LazyValue<Value: Sendable>: Sendable {
    private let made: Protected<Value?>
    private let make: @Sendable () -> Value

    init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        made = Protected(nil)
    }

    /// The value, made now if it was not yet. `make` runs under the lock: it must not read
    /// this value.
    var value: Value {
        made.write { made in
            if let value = made { return value }
            let value = make()
            made = value
            return value
        }
    }
}
