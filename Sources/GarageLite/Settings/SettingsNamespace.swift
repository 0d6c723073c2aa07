import GarageLiteCore
/// A group of settings keys: it prefixes their ids, and its hooks run around every change to
/// them.
///
/// ```swift
/// enum Animals: SettingsNamespace {
///     static let id = "animals"
/// }
///
/// enum Cats: SettingsNamespace {
///     typealias Parent = Animals
///     static let id = "cats"
///
///     static func didSet(_ change: SettingsChange, in garage: Garage) {
///         NotificationCenter.default.post(name: .catsChanged, object: change.keyID)
///     }
/// }
///
/// let lion = SettingsKey<Cats, Int>(id: "lion", defaultValue: 0)
/// lion.id      // "animals:cats:lion"
/// ```
///
/// A key's ``SettingsKey/id`` joins the ids of its namespace's ancestors, the namespace's own
/// and the key's with `":"`, outermost first. ``GlobalSettings``, the root, and any namespace
/// whose id is empty add nothing. An ancestor chain that comes back to a namespace already in
/// it stops there.
///
/// **Hooks.** ``willSet(_:in:)`` runs before every ``Garage/set(_:for:)-5ws8a`` and
/// ``Garage/removeValue(for:)-4i61z`` of a key of the namespace, or of a namespace nested in
/// it, and cancels the change by throwing; ``didSet(_:in:)`` runs after it. The hooks of every
/// namespace of the chain run: `willSet` from the outermost namespace in (so that a parent can
/// refuse a change before its children's hooks see it), `didSet` from the key's own namespace
/// out. Both run on the thread or task of the call that changes the setting, outside the
/// garage's locks: they may read and change the garage, settings included (a change made by a
/// hook runs hooks too).
///
/// A namespace's metatype crosses threads, hence `SendableMetatype`: in a module whose code is
/// isolated to the main actor by default, declare namespaces `nonisolated`.
public protocol SettingsNamespace: SendableMetatype {
    /// The namespace this one is nested in: ``GlobalSettings`` unless declared.
    ///
    /// ```swift
    /// typealias Parent = Animals
    /// ```
    associatedtype Parent: SettingsNamespace = GlobalSettings

    /// The namespace's part of its keys' ids, such as `"animals"`; it should not contain `":"`.
    static var id: String { get }

    /// Runs before a key of this namespace (or of one nested in it) is set or removed; throws
    /// to cancel the change, which then writes nothing and throws this error. The default does
    /// nothing.
    ///
    /// ```swift
    /// struct CannotBeReset: Error { var key: String }
    ///
    /// static func willSet(_ change: SettingsChange, in garage: Garage) throws {
    ///     if change.kind == .removal { throw CannotBeReset(key: change.keyID) }
    /// }
    /// ```
    static func willSet(_ change: SettingsChange, in garage: Garage) throws

    /// Runs after a key of this namespace (or of one nested in it) was set or removed. The
    /// default does nothing.
    ///
    /// When the change was written straight to the store, it has committed. Inside a
    /// transaction (``Garage/transaction(_:)-4nq2j``, ``Garage/beginTransaction()``), or with
    /// autosave off, it runs when the change has joined the transaction (or the unsaved
    /// changes): before they are committed, and even if they are then rolled back or
    /// discarded. ``Garage/updates(for:)`` reports committed values only.
    static func didSet(_ change: SettingsChange, in garage: Garage)
}

extension SettingsNamespace {
    /// Does nothing: every change is allowed.
    public static func willSet(_ change: SettingsChange, in garage: Garage) throws {}

    /// Does nothing.
    public static func didSet(_ change: SettingsChange, in garage: Garage) {}

    /// The parent, as a value.
    static var parentNamespace: any SettingsNamespace.Type { Parent.self }

    /// The namespaces of a key of this namespace, outermost first, this one last, without
    /// ``GlobalSettings``; a chain that comes back to a namespace stops there.
    static var lineage: [any SettingsNamespace.Type] {
        var chain: [any SettingsNamespace.Type] = []
        var seen: Set<ObjectIdentifier> = []
        var current: any SettingsNamespace.Type = Self.self
        while current != GlobalSettings.self, seen.insert(ObjectIdentifier(current)).inserted {
            chain.append(current)
            current = current.parentNamespace
        }
        return chain.reversed()
    }
}

/// The root namespace: a key of it has the id it is given.
///
/// ```swift
/// let launches = SettingsKey<GlobalSettings, Int>(id: "launches", defaultValue: 0)
/// launches.id      // "launches"
/// ```
///
/// Every other namespace is nested in it, directly or not; it has no hooks.
public enum GlobalSettings: SettingsNamespace {
    /// The global namespace's parent: itself.
    public typealias Parent = GlobalSettings

    /// Empty: the global namespace adds nothing to the ids of its keys.
    public static var id: String { "" }
}

/// A change to a setting, as a namespace's hooks see it.
///
/// ```swift
/// static func didSet(_ change: SettingsChange, in garage: Garage) {
///     if change.keyID == "appearance:theme" { ThemeCenter.reload() }
/// }
/// ```
public struct SettingsChange: Sendable, Hashable, CustomStringConvertible {
    /// What happens to the setting.
    public enum Kind: Sendable, Hashable {
        /// A value is stored: ``Garage/set(_:for:)-5ws8a`` (or a default persisted by
        /// ``Persisted``).
        case set
        /// The stored value is removed, and the key reads its default again:
        /// ``Garage/removeValue(for:)-4i61z``.
        case removal
    }

    /// The full id of the key, such as `"animals:cats:lion"` (``SettingsKey/id``).
    public let keyID: String
    /// Whether a value is set or removed.
    public let kind: Kind

    /// A change of the key `keyID`.
    public init(keyID: String, kind: Kind) {
        self.keyID = keyID
        self.kind = kind
    }

    /// `"set animals:cats:lion"`, `"removal of animals:cats:lion"`.
    public var description: String {
        switch kind {
        case .set: "set \(keyID)"
        case .removal: "removal of \(keyID)"
        }
    }
}
