import Crypto
import CryptoExtras
import Foundation
import GarageLiteCore
import GarageLiteSQLite

/// An encrypted store's key record, kept in the store (`garage_meta`, under `"encryption"`),
/// as JSON:
///
/// ```json
/// {"version": 1, "state": "encrypted",
///  "derivation": {"function": "PBKDF2-SHA256", "salt": "<base64>", "rounds": 600000},
///  "keys": {"1": "<base64: AES-GCM nonce, wrapped data key, tag>"}, "currentKey": 1,
///  "identityKey": "<base64>"}
/// ```
///
/// The data keys encrypt the objects (``AESGCMEncryptor``, by key id); the identity key makes
/// `Hashable` objects' identifiers HMACs. Each is wrapped by the key-encryption key derived
/// from the ``StoreKey`` (PBKDF2 for a passphrase, HKDF for a key, with the record's salt),
/// its ciphertext authenticating what it is (`"GarageLite data key 1"`): unwrapping the
/// current data key is the key check, which fails for any other key before anything is read.
/// More than one data key means a rotation is under way: rows of each key may be stored.
struct Keyring: Sendable {
    /// The most objects one data key encrypts: NIST SP 800-38D's bound for random 96-bit
    /// nonces (the synthetic nonces of ``AESGCMEncryptor`` are as random). The store's triggers
    /// count them and refuse beyond.
    static let encryptionLimit = EncryptionGuard.encryptionLimit

    /// The first characters of every envelope ``AESGCMEncryptor`` writes with the data key
    /// `keyID`: the base64 of its version and key id, whose last character also holds 2 bits
    /// of the nonce (so 4 prefixes), for the store's triggers.
    static func envelopePrefixes(keyID: UInt32) -> [String] {
        [UInt8(0x00), 0x40, 0x80, 0xC0].map { nonceStart in
            var bytes = [AESGCMEncryptor.envelopeVersion]
            withUnsafeBytes(of: keyID.bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(nonceStart)
            return String(Data(bytes).base64EncodedString().prefix(7))
        }
    }

    /// The prefixes of the envelopes of every data key this keyring's store has used (ids 1 to
    /// its newest), refused once the store is decrypted.
    var retiredEnvelopePrefixes: [String] {
        (1...max(1, dataKeys.keys.max() ?? 1)).flatMap { Self.envelopePrefixes(keyID: $0) }
    }

    /// The metadata name of the newest data key id a store used: a store encrypted again after
    /// a decryption starts after it, so that a garage opened before with an old key is refused.
    static let lastKeyIDName = "lastKeyID"

    /// The metadata name of the record.
    static let recordName = "encryption"

    struct Record: Codable, Equatable, Sendable {
        enum State: String, Codable, Sendable {
            /// Objects stored unencrypted before the store was encrypted may remain: opening
            /// the store with its key encrypts them.
            case encrypting
            case encrypted
            /// `decryptAllObjects()` was interrupted: a garage with the key reads both kinds
            /// and parks unencrypted, until it is called again.
            case decrypting
        }

        struct Derivation: Codable, Equatable, Sendable {
            /// `"PBKDF2-SHA256"` (a passphrase) or `"HKDF-SHA256"` (a key).
            var function: String
            var salt: String
            var rounds: Int?
        }

        var version = 1
        var state: State
        var derivation: Derivation
        /// The wrapped data keys, by id (in decimal).
        var keys: [String: String]
        var currentKey: UInt32
        var identityKey: String

        /// The record as stored: JSON with sorted keys.
        func text() throws -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        }

        static func read(_ text: String, path: String) throws -> Record {
            do {
                let record = try JSONDecoder().decode(Record.self, from: Data(text.utf8))
                guard record.version == 1 else {
                    throw GarageError.damagedStore(
                        path: path, operation: "read the store's key record",
                        reason: "its version is \(record.version); this GarageLite reads version 1")
                }
                return record
            } catch let error as GarageError {
                throw error
            } catch {
                throw GarageError.damagedStore(path: path, operation: "read the store's key record",
                                               reason: "it is not a key record: \(error)")
            }
        }

        /// How the key-encryption key is derived, in words.
        var derivationDescription: String {
            derivation.rounds.map { "\(derivation.function), \($0) rounds" } ?? derivation.function
        }
    }

    /// The record as read, its text (to replace it only if unchanged), and the key-encryption
    /// key that unwrapped it.
    let record: Record
    let text: String
    let keyEncryptionKey: SymmetricKey
    /// The data keys, by id, and the identity key, unwrapped.
    let dataKeys: [UInt32: SymmetricKey]
    let identityKey: SymmetricKey

    /// The encryptor of this keyring: the current data key, the others to read, the identity key.
    func encryptor() throws -> AESGCMEncryptor {
        var previous = dataKeys
        guard let current = previous.removeValue(forKey: record.currentKey) else {
            throw GarageError.invalidEncryptionKey(reason: "the store's key record has no current key \(record.currentKey)")
        }
        return try AESGCMEncryptor(key: current, keyID: record.currentKey, previousKeys: previous, identityKey: identityKey)
    }

    // MARK: - Deriving, wrapping

    /// The key-encryption key of `key` with `derivation`.
    static func keyEncryptionKey(_ key: StoreKey, _ derivation: Record.Derivation, path: String) throws -> SymmetricKey {
        guard let salt = Data(base64Encoded: derivation.salt) else {
            throw GarageError.damagedStore(path: path, operation: "read the store's key record", reason: "its salt is not base64")
        }
        switch (key.source, derivation.function) {
        case let (.passphrase(passphrase, _), "PBKDF2-SHA256"):
            guard let rounds = derivation.rounds, (StoreKey.minimumRounds...StoreKey.maximumRounds).contains(rounds) else {
                throw GarageError.damagedStore(
                    path: path, operation: "read the store's key record",
                    reason: "its PBKDF2 iteration count is missing or not between \(StoreKey.minimumRounds) and \(StoreKey.maximumRounds)")
            }
            // Normalized (NFC), so that the same passphrase typed on another keyboard or system opens the store.
            return try KDF.Insecure.PBKDF2.deriveKey(from: Data(passphrase.precomposedStringWithCanonicalMapping.utf8), salt: salt,
                                                     using: .sha256, outputByteCount: 32, rounds: rounds)
        case let (.key(key), "HKDF-SHA256"):
            guard key.bitCount == 256 else {
                throw GarageError.invalidEncryptionKey(reason: "the key has \(key.bitCount) bits; a store key has 256 (SymmetricKey(size: .bits256))")
            }
            return HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt,
                                          info: Data("GarageLite key-encryption key".utf8), outputByteCount: 32)
        case (.passphrase, _):
            throw GarageError.wrongEncryptionKey(path: path, reason: "the store is locked with a 256-bit key, not a passphrase")
        case (.key, _):
            throw GarageError.wrongEncryptionKey(path: path, reason: "the store is locked with a passphrase, not a key")
        }
    }

    /// A new derivation for `key`: a fresh salt, and the key's iteration count.
    static func newDerivation(for key: StoreKey) throws -> Record.Derivation {
        let salt = SymmetricKey(size: SymmetricKeySize(bitCount: 128)).withUnsafeBytes { Data($0) }.base64EncodedString()
        switch key.source {
        case let .passphrase(passphrase, rounds):
            guard !passphrase.isEmpty else { throw GarageError.invalidEncryptionKey(reason: "the passphrase is empty") }
            guard rounds >= StoreKey.minimumRounds else {
                throw GarageError.invalidEncryptionKey(
                    reason: "\(rounds) PBKDF2 rounds are too few; take at least \(StoreKey.minimumRounds) (\(StoreKey.defaultRounds) by default)")
            }
            guard rounds <= StoreKey.maximumRounds else {
                throw GarageError.invalidEncryptionKey(reason: "\(rounds) PBKDF2 rounds are too many; take at most \(StoreKey.maximumRounds)")
            }
            return Record.Derivation(function: "PBKDF2-SHA256", salt: salt, rounds: rounds)
        case .key:
            return Record.Derivation(function: "HKDF-SHA256", salt: salt, rounds: nil)
        }
    }

    private static func wrap(_ key: SymmetricKey, label: String, with kek: SymmetricKey) throws -> String {
        let sealed = try key.withUnsafeBytes { try AES.GCM.seal(Data($0), using: kek, authenticating: Data(label.utf8)) }
        guard let combined = sealed.combined else { throw GarageError.invalidEncryptionKey(reason: "AES-GCM gave no combined box") }
        return combined.base64EncodedString()
    }

    private static func unwrap(_ text: String, label: String, with kek: SymmetricKey) throws -> SymmetricKey {
        guard let combined = Data(base64Encoded: text) else { throw EnvelopeError() }
        let box = try AES.GCM.SealedBox(combined: combined)
        return SymmetricKey(data: try AES.GCM.open(box, using: kek, authenticating: Data(label.utf8)))
    }

    private struct EnvelopeError: Error {}

    private static func dataKeyLabel(_ id: UInt32) -> String { "GarageLite data key \(id)" }
    private static let identityKeyLabel = "GarageLite identity key"

    // MARK: - Opening, making, changing

    /// The keyring of the record `text`, unlocked with `key`.
    ///
    /// - throws: ``GarageError/wrongEncryptionKey(path:reason:)`` when `key` does not unwrap the
    ///   current data key; ``GarageError/damagedStore(path:operation:reason:)`` when the record
    ///   is not one, or only some of its keys unwrap.
    static func unlock(_ text: String, with key: StoreKey, path: String) throws -> Keyring {
        let record = try Record.read(text, path: path)
        let kek = try keyEncryptionKey(key, record.derivation, path: path)
        return try unlock(record, text: text, kek: kek, path: path)
    }

    private static func unlock(_ record: Record, text: String, kek: SymmetricKey, path: String) throws -> Keyring {
        guard let current = record.keys[String(record.currentKey)] else {
            throw GarageError.damagedStore(path: path, operation: "read the store's key record",
                                           reason: "it has no key of id \(record.currentKey), its current key")
        }
        do {
            _ = try unwrap(current, label: dataKeyLabel(record.currentKey), with: kek)
        } catch {
            throw GarageError.wrongEncryptionKey(path: path, reason: "it does not unwrap the store's data key")
        }
        do {
            var dataKeys: [UInt32: SymmetricKey] = [:]
            for (id, wrapped) in record.keys {
                guard let number = UInt32(id) else { throw EnvelopeError() }
                dataKeys[number] = try unwrap(wrapped, label: dataKeyLabel(number), with: kek)
            }
            let identity = try unwrap(record.identityKey, label: identityKeyLabel, with: kek)
            return Keyring(record: record, text: text, keyEncryptionKey: kek, dataKeys: dataKeys, identityKey: identity)
        } catch {
            throw GarageError.damagedStore(path: path, operation: "read the store's key record",
                                           reason: "its current key unwraps, but not all of its other keys: it was altered")
        }
    }

    /// A new keyring locked with `key`: a random data key (of id `keyID`) and identity key.
    static func make(with key: StoreKey, keyID: UInt32, path: String) throws -> Keyring {
        let derivation = try newDerivation(for: key)
        let kek = try keyEncryptionKey(key, derivation, path: path)
        return try build(state: .encrypting, derivation: derivation, kek: kek,
                         dataKeys: [keyID: SymmetricKey(size: .bits256)], current: keyID,
                         identityKey: SymmetricKey(size: .bits256))
    }

    private static func build(state: Record.State, derivation: Record.Derivation, kek: SymmetricKey,
                              dataKeys: [UInt32: SymmetricKey], current: UInt32, identityKey: SymmetricKey) throws -> Keyring {
        var wrapped: [String: String] = [:]
        for (id, key) in dataKeys { wrapped[String(id)] = try wrap(key, label: dataKeyLabel(id), with: kek) }
        let record = Record(state: state, derivation: derivation, keys: wrapped, currentKey: current,
                            identityKey: try wrap(identityKey, label: identityKeyLabel, with: kek))
        return Keyring(record: record, text: try record.text(), keyEncryptionKey: kek, dataKeys: dataKeys, identityKey: identityKey)
    }

    /// This keyring locked with `key` instead (the same data and identity keys).
    func locked(with key: StoreKey, path: String) throws -> Keyring {
        let derivation = try Self.newDerivation(for: key)
        return try Self.build(state: record.state, derivation: derivation,
                              kek: try Self.keyEncryptionKey(key, derivation, path: path),
                              dataKeys: dataKeys, current: record.currentKey, identityKey: identityKey)
    }

    /// This keyring with a new random data key as its current one (the others kept, to read).
    func addingDataKey() throws -> Keyring {
        let id = (dataKeys.keys.max() ?? 0) + 1
        var keys = dataKeys
        keys[id] = SymmetricKey(size: .bits256)
        return try Self.build(state: record.state, derivation: record.derivation, kek: keyEncryptionKey,
                              dataKeys: keys, current: id, identityKey: identityKey)
    }

    /// This keyring with only its current data key (a rotation's end).
    func droppingPreviousKeys() throws -> Keyring {
        try Self.build(state: record.state, derivation: record.derivation, kek: keyEncryptionKey,
                       dataKeys: dataKeys.filter { $0.key == record.currentKey }, current: record.currentKey,
                       identityKey: identityKey)
    }

    /// This keyring in `state`.
    func setting(_ state: Record.State) throws -> Keyring {
        var record = record
        record.state = state
        return Keyring(record: record, text: try record.text(), keyEncryptionKey: keyEncryptionKey,
                       dataKeys: dataKeys, identityKey: identityKey)
    }

    /// The keyring of `text`, a newer record of the store, if this keyring's key-encryption
    /// key unwraps it (another garage rotated the data key); `nil` if it doesn't (the key
    /// changed).
    func reread(_ text: String, path: String) throws -> Keyring? {
        let record = try Record.read(text, path: path)
        guard record.derivation == self.record.derivation else { return nil }
        return try Self.unlock(record, text: text, kek: keyEncryptionKey, path: path)
    }
}
