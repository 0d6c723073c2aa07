import Crypto
import Foundation
import GarageLiteCore

/// The key an encrypted store is locked with: a passphrase, or 256 bits of key.
///
/// ```swift
/// let garage = try Garage(path: path, encryptionKey: .passphrase(userPassphrase))
/// let other = try Garage(path: otherPath, encryptionKey: .key(keyFromTheKeychain))
/// ```
///
/// Neither encrypts an object: the store keeps a random 256-bit data key, and a random
/// identity key, each wrapped (encrypted with AES-256-GCM) by a key-encryption key derived
/// from this one. Changing the passphrase rewraps them (``Garage/changeEncryptionKey(to:)-702ag``);
/// rotating the data key rewrites every object (``Garage/rekey(to:)-7738p``).
public struct StoreKey: Sendable {
    enum Source: Sendable {
        case passphrase(String, rounds: Int)
        case key(SymmetricKey)
    }

    let source: Source

    /// PBKDF2-SHA256's iteration count by default: 600,000, OWASP's recommendation for it
    /// (2023). Each open of the store pays it once: about 0.1–0.3 s on a current phone or server
    /// core.
    public static let defaultRounds = 600_000

    /// The smallest iteration count taken: 210,000 (swift-crypto's floor for PBKDF2).
    public static let minimumRounds = 210_000

    /// The largest iteration count taken: 20,000,000 (a few seconds), so that an altered key
    /// record can't make an open run for hours.
    public static let maximumRounds = 20_000_000

    /// A passphrase, stretched by PBKDF2-HMAC-SHA256 with a random 128-bit salt and `rounds`
    /// iterations. The salt and the count are stored in the store, so that it opens with the
    /// passphrase alone; `rounds` applies when the store is locked with this key (when it is
    /// encrypted, or its key changes), not when it is opened. The passphrase is normalized to
    /// Unicode's composed form (NFC) first, so that it opens the store however it was typed.
    ///
    /// PBKDF2 rather than scrypt: it is the one both Apple's CommonCrypto and BoringSSL provide
    /// (swift-crypto uses either), and FIPS-approved; scrypt resists GPUs better, at the cost
    /// of memory. A passphrase is only as strong as it is long: this slows guessing, it
    /// doesn't replace entropy.
    public static func passphrase(_ passphrase: String, rounds: Int = defaultRounds) -> StoreKey {
        StoreKey(source: .passphrase(passphrase, rounds: rounds))
    }

    /// A 256-bit key (`SymmetricKey(size: .bits256)`, kept in the keychain, say). It is not
    /// stretched: it must be random.
    public static func key(_ key: SymmetricKey) -> StoreKey {
        StoreKey(source: .key(key))
    }
}
