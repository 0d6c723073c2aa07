import Foundation
import GarageLiteCore
import GarageLiteSQLite

/// A store of `Codable` object graphs in one SQLite file: you *park* objects in it and
/// *retrieve* them later.
///
/// Every object is one JSON row, identified by its type name and identifier. A nested
/// `Identifiable` value is parked as its own row, and its parent's JSON holds its
/// identifier; retrieving the parent rebuilds the graph. Values that are not
/// `Identifiable`, and ``InlineIdentifiable`` ones, are stored inline.
///
/// ```swift
/// struct Person: Mappable {
///     var id: String
///     var name: String
///     var brother: Person?
/// }
///
/// let garage = try Garage(named: "People")
/// try garage.park(Person(id: "1", name: "Sam", brother: Person(id: "2", name: "Max")))
/// let sam = try garage.retrieve(Person.self, identifier: "1")   // sam?.brother?.name == "Max"
/// ```
///
/// A `Garage` may be used from any number of threads at once. With autosave on (the
/// default), every call that changes the store has committed when it returns. A power cut
/// while the garage is open can take back the commits since the store's last checkpoint; when
/// the garage is deinitialized, or the process exits, it checkpoints them into the store file,
/// and a power cut then takes back nothing.
public final class Garage: Sendable {
    let store: Store
    let state: Protected<State>
    let observers: ChangeObservers
    /// The versions of rows this garage handed out: a parent's park leaves a child it holds
    /// unchanged as stored when its row moved on since (``HandedOutVersions``).
    let handedOut = HandedOutVersions()

    struct State {
        var isAutosaveEnabled = true
        var dateEncodingStrategy = DateCoding.defaultEncodingStrategy
        var dateDecoding = DateDecoding.garageDefault
        var dataEncryptionDelegate: (any DataEncryptionDelegate)?
        var maximumUploadAttempts = 10
        /// The rule set with `deleteRule`; `nil`: the compatibility's.
        var deleteRule: DeleteRule?
        var compatibility = Compatibility.garageLite
        /// The transaction begun with `beginTransaction()`, or `nil`.
        var explicitTransaction: TransactionBuffer?
        /// The types registered with `register(_:)`.
        var registry = RegisteredTypes()
        /// Set while `decryptAllObjects()` runs: objects are parked unencrypted.
        var isDecryptingStore = false
        /// The store's key record, unlocked, when the garage was opened with its key.
        var keyring: Keyring?
    }

    /// Internal rather than private so that tests can open a garage on a store they opened
    /// themselves (`SQLiteEngine.open(path:busyTimeout:migrations:)` with a next format version).
    init(engine: any StorageEngine) {
        let observers = ChangeObservers()
        self.observers = observers
        self.store = Store(engine: engine, listener: observers)
        self.state = Protected(State())
    }

    // MARK: - Opening a garage

    /// Opens the garage named `name`: the file `<name>.sqlite` in the user's application
    /// support directory (on Linux, `$XDG_DATA_HOME` or `~/.local/share`), creating the
    /// directory and the store as needed. A name with slashes, such as `"MyApp/People"`, puts
    /// the store in subfolders of that directory, created too.
    ///
    /// ```swift
    /// let garage = try Garage(named: "MyGarage")
    /// ```
    ///
    /// - parameter name: The name of the store file, without `.sqlite`.
    /// - parameter encryptionKey: The key the store is locked with, for an encrypted store (see
    ///   ``init(path:busyTimeout:encryptionKey:)``).
    /// - throws: ``GarageError/cannotOpenStore(path:reason:)`` when the store can't be
    ///   opened or created; ``GarageError/notAGarageStore(path:reason:)`` or
    ///   ``GarageError/newerFormatVersion(path:version:supportedVersion:)`` when the file
    ///   is not a store this version can read (the file is then left untouched);
    ///   ``GarageError/encryptionKeyRequired(path:)`` for an encrypted store opened without
    ///   `encryptionKey`, ``GarageError/wrongEncryptionKey(path:reason:)`` with another key.
    public convenience init(named name: String, encryptionKey: StoreKey? = nil) throws {
        guard !name.isEmpty, !name.hasSuffix("/") else {
            throw GarageError.cannotOpenStore(path: "\(name).sqlite", reason: "the name \"\(name)\" names no file")
        }
        let fileManager = FileManager.default
        guard let folder = fileManager.urls(for: .applicationSupportDirectory, in: .userDomainMask).first else {
            throw GarageError.cannotOpenStore(path: "\(name).sqlite", reason: "the system has no application support directory")
        }
        // A name with slashes ("MyApp/People") names subfolders, created as Core Data does.
        let file = folder.appendingPathComponent("\(name).sqlite")
        let storeFolder = file.deletingLastPathComponent()
        do {
            try fileManager.createDirectory(at: storeFolder, withIntermediateDirectories: true)
        } catch {
            throw GarageError.cannotOpenStore(
                path: file.path,
                reason: "the folder \(storeFolder.path) cannot be created: \(error.localizedDescription)")
        }
        try self.init(url: file, encryptionKey: encryptionKey)
    }

    /// Opens the store file at `url`, creating it if it does not exist. Its folder must exist.
    ///
    /// - parameter url: A file URL.
    /// - parameter busyTimeout: How long a write waits for another connection (another
    ///   garage, or another process) to release the store before it throws
    ///   ``GarageError/storeBusy(operation:path:)``.
    /// - parameter encryptionKey: The key the store is locked with, for an encrypted store (see
    ///   ``init(path:busyTimeout:encryptionKey:)``).
    /// - throws: See ``init(named:encryptionKey:)``.
    public convenience init(url: URL, busyTimeout: TimeInterval = Garage.defaultBusyTimeout,
                            encryptionKey: StoreKey? = nil) throws {
        guard url.isFileURL else {
            throw GarageError.cannotOpenStore(path: url.absoluteString, reason: "it is not a file URL")
        }
        try self.init(path: url.path, busyTimeout: busyTimeout, encryptionKey: encryptionKey)
    }

    /// Opens the store file at `path`, creating it if it does not exist. Its folder must exist.
    ///
    /// ```swift
    /// let garage = try Garage(path: "/var/lib/myapp/garage.sqlite")
    /// ```
    ///
    /// The store runs in SQLite's WAL mode: readers never wait for writers, and a writer waits
    /// up to `busyTimeout` for another writer to finish.
    ///
    /// - parameter path: The path of the store file.
    /// - parameter busyTimeout: How long a write waits for another connection (another
    ///   garage, or another process) to release the store before it throws
    ///   ``GarageError/storeBusy(operation:path:)``.
    /// With `encryptionKey`, the store is encrypted: every object is stored encrypted with
    /// AES-256-GCM, bound to its row (see ``StoreKey``, and <doc:Encryption>). A new
    /// store, or one that was not encrypted, is locked with that key (the objects it holds are
    /// encrypted before this returns); an encrypted one opens only with its key, checked before
    /// anything is read.
    ///
    /// ```swift
    /// let garage = try Garage(path: path, encryptionKey: .passphrase(passphrase))
    /// ```
    ///
    /// - parameter encryptionKey: The key the store is locked with, for an encrypted store.
    /// - throws: See ``init(named:encryptionKey:)``.
    public convenience init(path: String, busyTimeout: TimeInterval = Garage.defaultBusyTimeout,
                            encryptionKey: StoreKey? = nil) throws {
        try self.init(engine: .sqlite(path: path, busyTimeout: busyTimeout), encryptionKey: encryptionKey)
    }

    /// Opens a garage on `engine` (see ``GarageEngine``): SQLite by default, or an engine from
    /// its own product.
    ///
    /// ```swift
    /// let garage = try Garage(engine: .sqlite(path: path))
    /// let scratch = try Garage(engine: .inMemory())
    /// ```
    ///
    /// - parameter engine: The engine, opened on its store.
    /// - parameter encryptionKey: The key the store is locked with, for an encrypted store.
    /// - throws: See ``init(named:encryptionKey:)``.
    public convenience init(engine: GarageEngine, encryptionKey: StoreKey? = nil) throws {
        self.init(engine: engine.storage)
        try openKeyring(encryptionKey)
        // The claims of jobs that died with their process: released now rather than when they
        // expire. One read finds none, almost always; a failure here (a busy store) leaves
        // them to the next open, or to releaseStaleClaims().
        if store.isShared, !store.isReadOnly { _ = try? run(store.releasingClaimsOfEndedProcesses()) }
    }

    /// How long a write waits for the store by default: 10 seconds.
    public static let defaultBusyTimeout = GarageEngine.defaultBusyTimeout

    /// Returns a new, empty garage held in memory, gone when the garage is released.
    public static func inMemory() throws -> Garage {
        try Garage(engine: .inMemory())
    }

    /// Opens the existing store file at `path` for reading only, as a store shipped inside an
    /// app bundle: every call that reads works; every call that would write throws
    /// ``GarageError/readOnlyStore(path:operation:reason:)`` and writes nothing.
    ///
    /// ```swift
    /// let catalog = try Garage.readOnly(path: Bundle.main.path(forResource: "Catalog", ofType: "sqlite")!)
    /// let books = try catalog.retrieveAll(Book.self)
    /// ```
    ///
    /// ``init(path:busyTimeout:encryptionKey:)`` opens a store this way by itself when the file, or its folder
    /// (where SQLite keeps the `-wal` and `-shm` files), can't be written. In a folder that
    /// can't be written, and without a `-wal` file, the file is read as it is when opened:
    /// changes another process makes to it later are not seen.
    ///
    /// - parameter path: The path of the store file.
    /// - parameter encryptionKey: The key of an encrypted store; it is not encrypted when it isn't.
    /// - throws: ``GarageError/cannotOpenStore(path:reason:)`` when the file does not exist or
    ///   is not a store yet; see ``init(named:encryptionKey:)`` for the others.
    public static func readOnly(path: String, encryptionKey: StoreKey? = nil) throws -> Garage {
        try Garage(engine: .sqliteReadOnly(path: path, reason: "it was opened with Garage.readOnly(path:)"),
                   encryptionKey: encryptionKey)
    }

    /// The path of the store file, or `nil` for an in-memory garage.
    public var path: String? { store.path }

    // MARK: - Configuration

    /// Whether every call that changes the garage commits before it returns. Default `true`.
    ///
    /// When `false`, changes are kept in memory until ``save()-9hqro``: this garage reads them, other
    /// garages and processes don't see them, and they hold no lock on the store. Inside
    /// ``withAutosaveDisabled(_:)-6e5nv``, this is `false` for the calls of that closure.
    public var isAutosaveEnabled: Bool {
        get {
            state.read { $0.isAutosaveEnabled } && !GarageScope.scopes(of: self).contains { $0.disablesAutosave }
        }
        set { state.write { $0.isAutosaveEnabled = newValue } }
    }

    /// How `Date` values are written into an object's JSON. The default writes the date's
    /// `timeIntervalSinceReferenceDate`, which round-trips exactly.
    ///
    /// A `Hashable` object's identifier is computed from its JSON, so it depends on this strategy.
    public var dateEncodingStrategy: JSONEncoder.DateEncodingStrategy {
        get { state.read { $0.dateEncodingStrategy } }
        set { state.write { $0.dateEncodingStrategy = newValue } }
    }

    /// How `Date` values are read from an object's JSON. The default reads what the default
    /// ``dateEncodingStrategy`` writes, and ISO 8601 strings such as GarageStorage's
    /// `yyyy-MM-dd'T'HH:mm:ssZZZZZ`; anything else throws `DecodingError.dataCorrupted`.
    public var dateDecodingStrategy: JSONDecoder.DateDecodingStrategy {
        get { state.read { $0.dateDecoding.strategy } }
        set { state.write { $0.dateDecoding = .strategy(newValue) } }
    }

    /// Encrypts rows as they are parked and decrypts them as they are retrieved. Held strongly.
    ///
    /// Reading an encrypted row while this is `nil` throws
    /// ``GarageError/missingEncryptionDelegate(typeName:identifier:)``.
    public var dataEncryptionDelegate: (any DataEncryptionDelegate)? {
        get { state.read { $0.dataEncryptionDelegate } }
        set { state.write { $0.dataEncryptionDelegate = newValue } }
    }

    /// How many failed uploads (``release(_:retryAfter:error:)-8n7ea``) hold an object back from
    /// sync jobs' claims, until ``retryHeld(_:identifiers:)-5l9ef`` or a new edit of it. Default 10.
    public var maximumUploadAttempts: Int {
        get { state.read { $0.maximumUploadAttempts } }
        set { state.write { $0.maximumUploadAttempts = max(1, newValue) } }
    }

    /// What deleting an object does to the objects that reference it, for the calls that
    /// don't say: ``DeleteRule/deny`` by default, which refuses to delete an object others
    /// reference; ``DeleteRule/rowOnly`` under ``Compatibility/garageStorage`` until set.
    ///
    /// A GarageStorage app that relies on GarageStorage's delete, which deletes the row and
    /// leaves the references to it, sets ``DeleteRule/rowOnly`` when it opens the garage (or
    /// ``compatibility`` to ``Compatibility/garageStorage``, which does that and more):
    ///
    /// ```swift
    /// let garage = try Garage(named: "MyGarage")
    /// garage.deleteRule = .rowOnly
    /// ```
    public var deleteRule: DeleteRule {
        get { state.read { $0.deleteRule ?? ($0.compatibility.leavesReferencesDangling ? .rowOnly : .deny) } }
        set { state.write { $0.deleteRule = newValue } }
    }

    /// Runs `body` with dates encoded by `strategy`, then restores the previous strategy.
    ///
    /// The strategy applies to the calls `body` makes on this garage from the same thread or
    /// task; other threads keep the garage's ``dateEncodingStrategy``.
    ///
    /// ```swift
    /// try garage.withDateEncodingStrategy(.iso8601) {
    ///     try garage.park(event)
    /// }
    /// ```
    @discardableResult
    public func withDateEncodingStrategy<Result>(
        _ strategy: JSONEncoder.DateEncodingStrategy, _ body: () throws -> Result
    ) rethrows -> Result {
        try GarageScope.$current.withValue(GarageScope(garage: self, dateEncodingStrategy: strategy)) {
            try body()
        }
    }

    /// Runs `body` with dates decoded by `strategy`, then restores the previous strategy.
    ///
    /// The strategy applies to the calls `body` makes on this garage from the same thread or
    /// task; other threads keep the garage's ``dateDecodingStrategy``.
    ///
    /// ```swift
    /// let event = try garage.withDateDecodingStrategy(.iso8601) {
    ///     try garage.retrieve(Event.self, identifier: "launch")
    /// }
    /// ```
    @discardableResult
    public func withDateDecodingStrategy<Result>(
        _ strategy: JSONDecoder.DateDecodingStrategy, _ body: () throws -> Result
    ) rethrows -> Result {
        try GarageScope.$current.withValue(GarageScope(garage: self, dateDecodingStrategy: strategy)) {
            try body()
        }
    }

    /// Runs `body` with dates encoded by `strategy` (see the synchronous variant), in `async` code.
    @discardableResult
    public nonisolated(nonsending) func withDateEncodingStrategy<Result>(
        _ strategy: JSONEncoder.DateEncodingStrategy, _ body: nonisolated(nonsending) () async throws -> Result
    ) async rethrows -> Result {
        try await GarageScope.$current.withValue(GarageScope(garage: self, dateEncodingStrategy: strategy)) {
            try await body()
        }
    }

    /// Runs `body` with dates decoded by `strategy` (see the synchronous variant), in `async` code.
    @discardableResult
    public nonisolated(nonsending) func withDateDecodingStrategy<Result>(
        _ strategy: JSONDecoder.DateDecodingStrategy, _ body: nonisolated(nonsending) () async throws -> Result
    ) async rethrows -> Result {
        try await GarageScope.$current.withValue(GarageScope(garage: self, dateDecodingStrategy: strategy)) {
            try await body()
        }
    }

    /// What one call works with: the garage's settings, with the overrides of the
    /// `with...` scopes the call runs in.
    struct Configuration: Sendable {
        var dateEncodingStrategy: JSONEncoder.DateEncodingStrategy
        var dateDecoding: DateDecoding
        var dataEncryptionDelegate: (any DataEncryptionDelegate)?
        var registry: RegisteredTypes
        var isDecryptingStore: Bool
        /// The store's path when the garage was opened with its key.
        var keyedStorePath: String?
        /// Whether an object parked saying `.syncing` stays `.syncing` without a claim.
        var keepsParkedSyncingStatus = false
        /// The versions of rows the garage's decoders handed out (see ``HandedOutVersions``).
        var handedOut: HandedOutVersions
    }

    func configuration() -> Configuration {
        var configuration = state.read {
            Configuration(dateEncodingStrategy: $0.dateEncodingStrategy,
                          dateDecoding: $0.dateDecoding,
                          dataEncryptionDelegate: $0.dataEncryptionDelegate,
                          registry: $0.registry,
                          isDecryptingStore: $0.isDecryptingStore,
                          keyedStorePath: $0.keyring == nil ? nil : (store.path ?? ":memory:"),
                          keepsParkedSyncingStatus: $0.compatibility.keepsParkedSyncingStatus,
                          handedOut: handedOut)
        }
        var encodingSet = false, decodingSet = false
        for scope in GarageScope.scopes(of: self) {
            if !encodingSet, let strategy = scope.dateEncodingStrategy {
                configuration.dateEncodingStrategy = strategy
                encodingSet = true
            }
            if !decodingSet, let strategy = scope.dateDecodingStrategy {
                configuration.dateDecoding = .strategy(strategy)
                decodingSet = true
            }
        }
        return configuration
    }

    /// The garage's task-local state of the calling thread (the store access in progress, the
    /// `with...` and `transaction` scopes), for the fresh-stack threads of deep graphs.
    static let threadContext = ThreadContext {
        let storeState = Store.capturedState()
        let scope = GarageScope.current
        return { body in storeState { GarageScope.$current.withValue(scope, operation: body) } }
    }
}

extension Garage.Configuration {
    /// The encryption step of this call's rows.
    var encryption: EncryptionStage {
        EncryptionStage(delegate: dataEncryptionDelegate, writesPlaintext: isDecryptingStore, keyedStorePath: keyedStorePath)
    }
}

/// The `with...` and `transaction` scopes a call runs in, innermost first, for any garage.
///
/// Kept in a task-local value, so that a scope covers the calls of its own thread or task
/// only, and other threads using the same garage are unaffected.
final class GarageScope: Sendable {
    @TaskLocal static var current: GarageScope?

    let garage: ObjectIdentifier
    let parent: GarageScope?
    let dateEncodingStrategy: JSONEncoder.DateEncodingStrategy?
    let dateDecodingStrategy: JSONDecoder.DateDecodingStrategy?
    let disablesAutosave: Bool
    /// The changes of a `transaction { }` in progress.
    let transaction: TransactionBuffer?

    init(garage: Garage,
         dateEncodingStrategy: JSONEncoder.DateEncodingStrategy? = nil,
         dateDecodingStrategy: JSONDecoder.DateDecodingStrategy? = nil,
         disablesAutosave: Bool = false,
         transaction: TransactionBuffer? = nil) {
        self.garage = ObjectIdentifier(garage)
        self.parent = GarageScope.current
        self.dateEncodingStrategy = dateEncodingStrategy
        self.dateDecodingStrategy = dateDecodingStrategy
        self.disablesAutosave = disablesAutosave
        self.transaction = transaction
    }

    /// The scopes of `garage` the current call runs in, innermost first.
    static func scopes(of garage: Garage) -> [GarageScope] {
        var result: [GarageScope] = []
        var scope = current
        let identifier = ObjectIdentifier(garage)
        while let found = scope {
            if found.garage == identifier { result.append(found) }
            scope = found.parent
        }
        return result
    }
}

/// The changes of one `transaction { }`, until it ends.
///
/// A task started inside a transaction inherits its scope, and may write after the
/// transaction has ended: a closed buffer refuses those changes, which then go where they
/// would have gone outside the transaction.
final class TransactionBuffer: Sendable {
    private let changes = Protected<ChangeSet?>(ChangeSet())

    /// The changes so far, or `nil` once closed.
    var pending: ChangeSet? { changes.read { $0 } }

    /// Adds `other`; returns `false` when the transaction has already ended.
    func record(_ other: ChangeSet) -> Bool {
        let stamped = other.stamped(Date())
        return changes.write {
            guard $0 != nil else { return false }
            $0?.merge(stamped)
            return true
        }
    }

    /// Replaces the changes with `changes`; returns `false` when the transaction has ended.
    func replace(with changes: ChangeSet) -> Bool {
        self.changes.write {
            guard $0 != nil else { return false }
            $0 = changes
            return true
        }
    }

    /// Forgets the changes to the row `key`.
    func forget(_ key: ObjectKey) {
        changes.write { $0?.forget(key) }
    }

    /// Ends the transaction; returns its changes.
    func close() -> ChangeSet {
        changes.write { changes in
            let closed = changes ?? ChangeSet()
            changes = nil
            return closed
        }
    }
}

extension Garage: CustomStringConvertible {
    /// `Garage(/path/to/store.sqlite)`, or `Garage(in memory)`.
    public var description: String {
        "Garage(\(path ?? "in memory"))"
    }
}
