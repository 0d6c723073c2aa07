import Foundation
import GarageLiteCore

/// A typed setting: its id in a namespace, its value type and its default.
///
/// ```swift
/// enum Player: SettingsNamespace {
///     static let id = "player"
///     static let volume = SettingsKey<Player, Double>(id: "volume", defaultValue: 0.5)
///     static let lastSong = SettingsKey<Player, String?>(id: "last-song", defaultValue: nil)
/// }
///
/// try garage.value(for: Player.volume)          // 0.5 until set
/// try garage.set(0.8, for: Player.volume)
/// try garage.set("", for: Player.lastSong)     // "", not nil: an optional value is honoured
/// try garage.removeValue(for: Player.volume)   // 0.5 again
/// ```
///
/// A value is stored as a row of its own in the garage (its type name `GarageLite.Setting`,
/// its identifier the key's ``id``), so settings share the garage's file, transactions and
/// encryption, and are observed as objects are (``Garage/updates(for:)``). The value is
/// encoded as a record's is: its `Identifiable` parts are parked as rows of their own, unless
/// a ``JSONTransformer`` stores it as data. Keys of different value types with the same id
/// are one setting; reading it as a type it doesn't hold throws
/// ``SettingsError/valueMismatch(key:valueType:reason:)``. Being rows, settings are counted
/// by ``Garage/count()-22w0p`` and deleted by ``Garage/deleteAllObjects()-6s113``.
///
/// For an optional `Value`, a stored `nil` is a value: the key reads `nil` until
/// ``Garage/removeValue(for:)-4i61z`` brings its default back.
public struct SettingsKey<Namespace: SettingsNamespace, Value: Sendable>: Sendable {
    /// The full id: the ids of the namespace's chain and the key's own, joined with `":"`,
    /// such as `"animals:cats:lion"`; the key's own for a key of ``GlobalSettings``.
    public let id: String
    /// The value the key has while none is stored.
    public let defaultValue: Value
    /// How values are stored, and the namespaces whose hooks run.
    let setting: SettingCoding<Value>

    private init(id: String, defaultValue: Value, coding: (String) -> SettingCoding<Value>) {
        let fullID = (Namespace.lineage.map { $0.id }.filter { !$0.isEmpty } + [id]).joined(separator: ":")
        self.id = fullID
        self.defaultValue = defaultValue
        self.setting = coding(fullID)
    }
}

extension SettingsKey where Value: Codable {
    /// A key whose values are stored as themselves.
    ///
    /// ```swift
    /// let lion = SettingsKey<Cats, Int>(id: "lion", defaultValue: 0)
    /// let tags = SettingsKey<GlobalSettings, [String]>(id: "tags", defaultValue: []) { tags in
    ///     Array(Set(tags)).sorted()                  // stored sorted, without duplicates
    /// }
    /// ```
    ///
    /// - parameter id: The key's id in its namespace, such as `"lion"`.
    /// - parameter defaultValue: The value while none is stored.
    /// - parameter transform: Applied to every value set, before it is stored (not to the
    ///   default while it is not stored).
    public init(id: String, defaultValue: Value, transform: (@Sendable (Value) -> Value)? = nil) {
        self.init(id: id, defaultValue: defaultValue) { fullID in
            SettingCoding(id: fullID, namespaces: Namespace.lineage, transform: transform)
        }
    }
}

extension SettingsKey {
    /// A key whose values are stored as `transformer` makes them.
    ///
    /// ```swift
    /// enum Theme: Int, Sendable { case light = 1, dark = 2 }
    /// let theme = SettingsKey<GlobalSettings, Theme>(
    ///     id: "theme", defaultValue: .light, transformer: RawRepresentableTransformer())   // stores 1 or 2
    /// ```
    ///
    /// `Value` need not be `Codable`: the transformer's output is stored. A value the
    /// transformer can't transform is not stored, and its error is thrown; a stored value it
    /// can't untransform is reported as ``SettingsError/valueMismatch(key:valueType:reason:)``.
    ///
    /// - parameter id: The key's id in its namespace.
    /// - parameter defaultValue: The value while none is stored.
    /// - parameter transformer: Makes what is stored of a value, and the value of what is stored.
    /// - parameter transform: Applied to every value set, before the transformer.
    public init<T: Transformer>(
        id: String, defaultValue: Value, transformer: T, transform: (@Sendable (Value) -> Value)? = nil
    ) where T.Input == Value, T.Output: Codable & Sendable {
        self.init(id: id, defaultValue: defaultValue) { fullID in
            SettingCoding(id: fullID, namespaces: Namespace.lineage, transformer: transformer, transform: transform)
        }
    }
}

/// What a setting needs of its key, without its namespace type: its id, the namespaces whose
/// hooks run, and how its values are stored and read back.
struct SettingCoding<Value: Sendable>: Sendable {
    /// The key's full id: the identifier of its row.
    let id: String
    /// The key's namespaces, outermost first.
    let namespaces: [any SettingsNamespace.Type]
    /// The type of its row.
    let storedType: any StoredSettingValue.Type
    /// The key's transform, applied to a value set.
    let transform: (@Sendable (Value) -> Value)?
    /// A value as its row (after the transform), and a row as a value.
    private let toRow: @Sendable (Value) throws -> any StoredSettingValue
    private let fromRow: @Sendable (any StoredSettingValue) throws -> Value
    /// The type of its row read with its revision, and a stored value as a value.
    let revisionedType: any RevisionedSettingValue.Type
    private let makeRevisioned: @Sendable (Value, Int64) throws -> any RevisionedSettingValue
    private let fromStored: @Sendable (any Sendable) throws -> Value

    /// Values stored as themselves.
    init(id: String, namespaces: [any SettingsNamespace.Type], transform: (@Sendable (Value) -> Value)?) where Value: Codable {
        self.id = id
        self.namespaces = namespaces
        self.transform = transform
        storedType = StoredSetting<Value>.self
        toRow = { StoredSetting($0) }
        fromRow = { row in
            guard let row = row as? StoredSetting<Value> else { throw Self.unexpected(row, id: id) }
            return row.value
        }
        revisionedType = RevisionedSetting<Value>.self
        makeRevisioned = { RevisionedSetting(value: $0, revision: $1) }
        fromStored = { stored in
            guard let value = stored as? Value else { throw Self.unexpected(stored, id: id) }
            return value
        }
    }

    /// Values stored as `transformer`'s output.
    init<T: Transformer>(
        id: String, namespaces: [any SettingsNamespace.Type], transformer: T, transform: (@Sendable (Value) -> Value)?
    ) where T.Input == Value, T.Output: Codable & Sendable {
        self.id = id
        self.namespaces = namespaces
        self.transform = transform
        storedType = StoredSetting<T.Output>.self
        toRow = { StoredSetting(try transformer.transform($0)) }
        fromRow = { row in
            guard let row = row as? StoredSetting<T.Output> else { throw Self.unexpected(row, id: id) }
            return try transformer.untransform(row.value)
        }
        revisionedType = RevisionedSetting<T.Output>.self
        makeRevisioned = { RevisionedSetting(value: try transformer.transform($0), revision: $1) }
        fromStored = { stored in
            guard let output = stored as? T.Output else { throw Self.unexpected(stored, id: id) }
            return try transformer.untransform(output)
        }
    }

    /// A row of another type than the key's (which the garage, reading the key's, never gives).
    private static func unexpected(_ row: Any, id: String) -> SettingsError {
        .valueMismatch(key: id, valueType: Identity.displayName(Value.self), reason: "its row was read as \(type(of: row))")
    }

    /// The row that stores `value`: transformed by the key's transform, then its transformer.
    func row(for value: Value) throws -> any StoredSettingValue {
        try toRow(transform?(value) ?? value)
    }

    /// The row that stores `value` (transformed by the key's transform, then its transformer)
    /// if the row is still at `revision` when it is written (0: if there is none).
    func revisionedRow(for value: Value, revision: Int64) throws -> any RevisionedSettingValue {
        try makeRevisioned(transform?(value) ?? value, revision)
    }

    /// The value a row read with its revision stores.
    func value(ofRevisioned row: any RevisionedSettingValue) throws -> Value {
        do {
            return try fromStored(row.storedValue)
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError.mismatch(id, Value.self, error)
        }
    }

    /// The value `row` stores.
    ///
    /// - throws: ``SettingsError/valueMismatch(key:valueType:reason:)`` when the transformer
    ///   refuses it.
    func value(of row: any StoredSettingValue) throws -> Value {
        do {
            return try fromRow(row)
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError.mismatch(id, Value.self, error)
        }
    }

    /// Runs the namespaces' `willSet` hooks, outermost first; the first that throws cancels.
    func willChange(_ change: SettingsChange, in garage: Garage) throws {
        for namespace in namespaces {
            try namespace.willSet(change, in: garage)
        }
    }

    /// Runs the namespaces' `didSet` hooks, the key's own namespace first.
    func didChange(_ change: SettingsChange, in garage: Garage) {
        for namespace in namespaces.reversed() {
            namespace.didSet(change, in: garage)
        }
    }
}
