import Crypto
import Foundation
import GarageLite
import GarageStressModels

/// `garage-stress-worker <store-path> reencrypt <old> <new>`: moves every object of the store
/// from the key of 32 bytes `<old>` (key id 1) to the key of 32 bytes `<new>` (key id 2), as
/// `reencryptObjects()` does, and prints `DONE <count>`. The crash test kills it midway.
func runReencrypt(storePath: String, oldKeyByte: String, newKeyByte: String) -> Never {
    guard let old = UInt8(oldKeyByte), let new = UInt8(newKeyByte) else {
        print("ERROR the keys are bytes, 0 to 255")
        exit(2)
    }
    do {
        let garage = try TestStores.open(path: storePath)
        garage.dataEncryptionDelegate = try AESGCMEncryptor(
            key: SymmetricKey(data: Data(repeating: new, count: 32)), keyID: 2,
            previousKeys: [1: SymmetricKey(data: Data(repeating: old, count: 32))])
        print("DONE \(try garage.reencryptObjects())")
        exit(0)
    } catch {
        print("ERROR reencrypt threw: \(error)")
        exit(1)
    }
}

/// `garage-stress-worker <store-path> rekey <old-passphrase> <new-passphrase>`: opens the
/// store locked with the old passphrase and rotates its data key to the new one
/// (`rekey(to:)`), with the smallest PBKDF2 iteration count, for `ReencryptCrashTests`.
func runRekey(storePath: String, oldPassphrase: String, newPassphrase: String) -> Never {
    do {
        let garage = try TestStores.open(path: storePath, busyTimeout: 30,
                                           encryptionKey: .passphrase(oldPassphrase, rounds: StoreKey.minimumRounds))
        print("DONE \(try garage.rekey(to: .passphrase(newPassphrase, rounds: StoreKey.minimumRounds)))")
        exit(0)
    } catch {
        print("ERROR rekey threw: \(error)")
        exit(1)
    }
}
