// Lock a store with a passphrase, change the passphrase, rotate the data key, and decrypt the
// store again.

import Foundation
import GarageLite

// snippet.hide
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("Encryption-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let path = folder.appendingPathComponent("Secrets.sqlite").path
let passphrase = "correct horse battery staple"
let newPassphrase = "a longer passphrase, chosen after a leak"
// snippet.show
// snippet.open
let garage = try Garage(path: path, encryptionKey: .passphrase(passphrase))
// or, with 256 random bits kept where the platform keeps secrets (the keychain), from swift-crypto:
// Garage(path: path, encryptionKey: .key(SymmetricKey(size: .bits256)))
// snippet.end

// snippet.hide
struct Secret: Mappable {
    var id: String
    var text: String
}
try garage.park(Secret(id: "pin", text: "1234"))
// snippet.show
// snippet.keys
try garage.changeEncryptionKey(to: .passphrase(newPassphrase))   // rewraps the keys: no object is rewritten
try garage.rekey(to: .passphrase(newPassphrase))                 // a new data key: every object is rewritten (returns how many)
let status = try garage.encryptionStatus()                       // key ids in use, encryptions, unfinished work
try garage.decryptAllObjects()                                   // back to a plain store, which forgets the key
// snippet.end
// snippet.hide
print(status)
print(try garage.retrieve(Secret.self, identifier: "pin")?.text ?? "-")   // 1234
try? FileManager.default.removeItem(at: folder)
