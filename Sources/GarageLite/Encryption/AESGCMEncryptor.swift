import Crypto
import Foundation
import GarageLiteCore

/// Encrypts each object with AES-256-GCM, bound to its row: the ready
/// ``RowBoundEncryptionDelegate``.
///
/// ```swift
/// let key = SymmetricKey(size: .bits256)             // keep it in the keychain, say
/// garage.dataEncryptionDelegate = try AESGCMEncryptor(key: key)
/// ```
///
/// Each encryption authenticates the row it is for (``EncryptionContext/associatedData``) and
/// the key's id: a ciphertext copied into another row, of another object or another type, or
/// read with another key, fails with ``GarageError/decryptionFailed(typeName:identifier:reason:)``
/// naming the object. Each is stored as base64 text of a versioned envelope: a version byte
/// (1), the key's id (4 bytes, big-endian), the nonce (12 bytes), the ciphertext and the tag
/// (16 bytes).
///
/// The 96-bit nonce is synthetic: an HMAC-SHA256, with a key derived from the encryption key,
/// of the key id, the row and the JSON. Every different content of every row gets its own
/// pseudo-random nonce, as a random one would; the same content of the same row gets the same
/// ciphertext, so that parking an unchanged object stores the same bytes and changes nothing
/// (its revision, its sync status, the changes observers see), as without encryption. What that
/// reveals: that a row holds again a content it held before, which a change of its revision
/// shows anyway. Nonce collisions between different contents are as likely as with random
/// nonces: rotate the key before 2³² encryptions.
///
/// Keys change without rewriting the store at once: give the encryptor the old keys too,
/// by id. It encrypts with `key`, and decrypts what any of them encrypted.
///
/// ```swift
/// garage.dataEncryptionDelegate = try AESGCMEncryptor(key: newKey, keyID: 2, previousKeys: [1: oldKey])
/// ```
public final class AESGCMEncryptor: RowBoundEncryptionDelegate {
    /// The envelope format this encryptor writes.
    static let envelopeVersion: UInt8 = 1
    /// Version, key id and nonce; then the ciphertext, then the tag.
    static let headerSize = 1 + 4 + 12
    static let tagSize = 16

    /// The id of the key it encrypts with.
    public let keyID: UInt32
    private let keys: [UInt32: SymmetricKey]
    /// The key it encrypts with (`keys[keyID]`).
    private let currentKey: SymmetricKey
    /// The key of the synthetic nonces, derived from the current key.
    /// The HMAC that makes each nonce, keyed: a copy per encryption.
    private let nonceMAC: HMAC<SHA256>
    /// The key of `Hashable` objects' identifiers, when they are keyed.
    private let identityKey: SymmetricKey?

    /// An encryptor with the 256-bit `key`, whose id (stored with each ciphertext) is `keyID`;
    /// it also decrypts what `previousKeys` encrypted, by their ids.
    ///
    /// - throws: ``GarageError/invalidEncryptionKey(reason:)`` for a key that is not 256 bits, or
    ///   a previous key with `keyID` as its id.
    ///
    /// - parameter key: The 256-bit key new ciphertexts are encrypted with.
    /// - parameter keyID: The id stored with each ciphertext of `key`.
    /// - parameter previousKeys: Keys that encrypted earlier ciphertexts, by id: they are read,
    ///   never written.
    /// - parameter identityKey: When set, a `Hashable` object's identifier is the HMAC-SHA256 of
    ///   its content with this key, instead of its SHA-256, which anyone can compute (and so
    ///   guess small contents from). Keep the same identity key when the encryption key changes:
    ///   the identifiers, and so the objects' rows, depend on it. Objects parked before it was
    ///   set keep their old identifiers (park them again, and delete the old rows).
    public init(key: SymmetricKey, keyID: UInt32 = 1, previousKeys: [UInt32: SymmetricKey] = [:],
                identityKey: SymmetricKey? = nil) throws {
        for (id, candidate) in previousKeys.merging([keyID: key], uniquingKeysWith: { $1 }) where candidate.bitCount != 256 {
            throw GarageError.invalidEncryptionKey(
                reason: "the key with id \(id) has \(candidate.bitCount) bits; AES-256-GCM takes 256 (SymmetricKey(size: .bits256))")
        }
        if previousKeys[keyID] != nil {
            throw GarageError.invalidEncryptionKey(reason: "the key id \(keyID) is both the current key's and a previous key's")
        }
        self.keyID = keyID
        var keys = previousKeys
        keys[keyID] = key
        self.keys = keys
        currentKey = key
        self.identityKey = identityKey
        let nonceKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Data("GarageLite AES-GCM synthetic nonce".utf8),
                                              outputByteCount: 32)
        nonceMAC = HMAC<SHA256>(key: nonceKey)
    }

    /// The HMAC-SHA256 of `json` with the identity key, in lowercase hex; `nil` without one.
    public func contentIdentifier(ofCanonicalJSON json: Data) -> String? {
        guard let identityKey else { return nil }
        return HMAC<SHA256>.authenticationCode(for: json, using: identityKey).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The base64 envelope of `data`, encrypted with the current key for the row `context` names.
    public func encrypt(_ data: Data, for context: EncryptionContext) throws -> String {
        // The MAC's input in one buffer, and its key set once (in `init`): each call into
        // Crypto costs thousands of instructions before it hashes a byte, keying its HMAC more.
        var input: [UInt8] = []
        input.reserveCapacity(4 + context.associatedDataCount + data.count)
        withUnsafeBytes(of: keyID.bigEndian) { input.append(contentsOf: $0) }
        context.appendAssociatedData(to: &input)
        input.append(contentsOf: data)
        var mac = nonceMAC
        mac.update(data: input)
        let nonce = try mac.finalize().withUnsafeBytes { try AES.GCM.Nonce(data: $0.prefix(12)) }
        var envelope = Self.header(keyID: keyID, nonce: nonce)
        let box = try AES.GCM.seal(data, using: currentKey, nonce: nonce,
                                   authenticating: Self.associatedData(header: envelope, context: context))
        envelope.reserveCapacity(Self.headerSize + data.count + Self.tagSize)
        envelope.append(contentsOf: box.ciphertext)
        envelope.append(contentsOf: box.tag)
        return Data(envelope).base64EncodedString()
    }

    /// The JSON an envelope holds, when it was encrypted for the row `context` names with one
    /// of the encryptor's keys.
    ///
    /// - throws: ``EnvelopeError`` for a string that is not an envelope, of an unknown version,
    ///   or of a key the encryptor doesn't have, and when it doesn't authenticate (it was
    ///   encrypted for another row, or with another key, or altered).
    public func decrypt(_ string: String, for context: EncryptionContext) throws -> Data {
        guard let envelope = Data(base64Encoded: string) else { throw EnvelopeError.notBase64 }
        guard envelope.count >= Self.headerSize + Self.tagSize else {
            throw EnvelopeError.truncated(bytes: envelope.count)
        }
        let (version, id) = envelope.withUnsafeBytes { bytes in
            (bytes[0], bytes[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        guard version == Self.envelopeVersion else { throw EnvelopeError.unknownVersion(version) }
        guard let key = keys[id] else { throw EnvelopeError.unknownKey(id) }
        let header = envelope.prefix(Self.headerSize)
        // After the version and key id come the nonce, the ciphertext and the tag: the
        // "combined" form, read at once (three slices cost as much again as the decryption).
        let box = try AES.GCM.SealedBox(combined: envelope.dropFirst(5))
        do {
            return try AES.GCM.open(box, using: key, authenticating: Self.associatedData(header: header, context: context))
        } catch {
            // CryptoKit's authenticationFailure; on Linux, BoringSSL's error for it.
            throw EnvelopeError.authenticationFailed(keyID: id)
        }
    }

    /// The id of the key `envelope` was encrypted with, read from its header; `nil` when it is
    /// not an envelope.
    static func keyID(ofEnvelope envelope: String) -> UInt32? {
        // 8 base64 characters are the first 6 bytes: the version and the key id.
        guard envelope.utf8.count >= 8, let prefix = Data(base64Encoded: String(envelope.prefix(8))),
              prefix.count == 6, prefix[prefix.startIndex] == envelopeVersion else { return nil }
        return prefix.dropFirst().prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    private static func header(keyID: UInt32, nonce: AES.GCM.Nonce) -> [UInt8] {
        var header = [envelopeVersion]
        withUnsafeBytes(of: keyID.bigEndian) { header.append(contentsOf: $0) }
        nonce.withUnsafeBytes { header.append(contentsOf: $0) }
        return header
    }

    /// What each ciphertext authenticates: its envelope's header (version, key id, nonce) and
    /// its row.
    private static func associatedData<Header: Collection<UInt8>>(header: Header, context: EncryptionContext) -> [UInt8] {
        var data: [UInt8] = []
        data.reserveCapacity(header.count + context.associatedDataCount)
        data.append(contentsOf: header)
        context.appendAssociatedData(to: &data)
        return data
    }

    /// Why a stored string is not an envelope this encryptor can open.
    public enum EnvelopeError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The string is not base64.
        case notBase64
        /// The envelope has `bytes` bytes: fewer than a header and a tag.
        case truncated(bytes: Int)
        /// The envelope is of a version this encryptor doesn't read.
        case unknownVersion(UInt8)
        /// The envelope was encrypted with the key of this id, which the encryptor doesn't have.
        case unknownKey(UInt32)
        /// The envelope doesn't authenticate with the key of this id: it was encrypted for
        /// another row (another object, or another type), or with another key of the same id,
        /// or it was altered.
        case authenticationFailed(keyID: UInt32)

        /// What is wrong with the envelope.
        public var description: String {
            switch self {
            case .notBase64: "the stored text is not an AES-GCM envelope (not base64)"
            case let .truncated(bytes): "the envelope is truncated (\(bytes) bytes; a header and a tag take 33)"
            case .unknownVersion: "the stored text is not an envelope of this encryptor (unknown version)"
            case let .unknownKey(id): "the envelope was encrypted with the key of id \(id), which this encryptor doesn't have"
            case let .authenticationFailed(id):
                "the envelope doesn't authenticate with the key of id \(id): it was encrypted for another row (another "
                    + "object, or another type), or with another key, or it was altered"
            }
        }
    }
}
