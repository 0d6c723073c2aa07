import Foundation
import GarageLiteCore

extension GarageEngine {
    /// What a commit the garage acknowledged survives: a crash of the app, or also a power cut
    /// or a crash of the operating system. Chosen when the store is opened
    /// (``GarageEngine/sqlite(path:busyTimeout:durability:)``).
    ///
    /// Neither setting can corrupt the store: after any crash it opens, sound, holding a
    /// prefix of its commits. They differ in how long that prefix is after a power cut.
    ///
    /// ```swift
    /// // A sync job that must never download twice what it acknowledged:
    /// let garage = try Garage(engine: .sqlite(path: path, durability: .full))
    /// ```
    public enum Durability: Sendable, Hashable {
        /// The default. A commit survives the app's crash or kill as soon as the call returns;
        /// a power cut or an operating-system crash can roll back the commits made since the
        /// store last synced its log to storage (at its checkpoints, every thousand pages or
        /// so, and when the garage closes). A single park costs about the same as in the
        /// file's memory cache. SQLite's `synchronous = NORMAL` in WAL mode.
        case normal
        /// Every commit is synced to storage before the call returns: a power cut loses
        /// nothing the garage acknowledged. Each commit waits for the storage's flush, which
        /// on a phone's flash or a laptop's SSD is a fraction of a millisecond to several
        /// milliseconds: it matters for many small commits (single parks, claims), not for
        /// `parkAll`. SQLite's `synchronous = FULL`.
        case full
    }
}
