import Foundation
import GarageLiteCore

/// The database a garage keeps its store in.
///
/// SQLite is the default: ``Garage/init(path:busyTimeout:encryptionKey:)`` and
/// ``Garage/inMemory()`` open a garage on it, and so does ``Garage/init(engine:encryptionKey:)``
/// with ``sqlite(path:busyTimeout:durability:)`` or ``inMemory()``. Another engine comes in a product of
/// its own, which adds its factory to this type.
///
/// ```swift
/// let garage = try Garage(engine: .sqlite(path: path, busyTimeout: 30))
/// ```
///
/// Every engine keeps the same promises (the rules of the object table are the garage's, not
/// the engine's). What only some engines can do, a garage does without on the others, and says
/// so where it matters: on an engine that can't watch other connections' commits, observers
/// hear of the garage's own commits only (``Garage/changes(of:)``); on one that can't erase
/// freed content, a key rotation leaves earlier ciphertexts wherever the engine leaves freed
/// data (``Garage/rekey(to:)-7738p``).
public struct GarageEngine: Sendable {
    /// The engine, opened.
    let storage: any StorageEngine

    /// How long a write waits for another connection's by default: 10 seconds.
    public static let defaultBusyTimeout: TimeInterval = 10

    /// An engine on `storage`, opened: how a product of this package that brings an engine
    /// (its type implements ``StorageEngine``) makes its factory (see ARCHITECTURE.md,
    /// "Adding an engine").
    package init(_ storage: any StorageEngine) {
        self.storage = storage
    }
}
