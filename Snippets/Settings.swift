// Typed settings kept in the garage: a namespace, keys with defaults, and a property that is a
// setting.

import Foundation
import GarageLite

// snippet.hide
let garage = try Garage.inMemory()
// snippet.show
// snippet.keys
enum Player: SettingsNamespace {
    static let id = "player"
    static let volume = SettingsKey<Player, Double>(id: "volume", defaultValue: 0.5)
    static let lastSong = SettingsKey<Player, String?>(id: "last-song", defaultValue: nil)
    static let plays = SettingsKey<Player, Int>(id: "plays", defaultValue: 0)
}

print(try garage.value(for: Player.volume))       // 0.5
try garage.set(0.8, for: Player.volume)
try garage.set("", for: Player.lastSong)         // "": a stored value, not the nil default
try garage.removeValue(for: Player.volume)       // true; 0.5 again
try garage.updateValue(for: Player.plays) { $0 + 1 }   // atomic: no concurrent write is lost
// snippet.end
// snippet.hide
if CommandLine.arguments.contains("--watch") {   // runs until interrupted
// snippet.show
// snippet.updates
for try await update in garage.updates(for: Player.volume) {   // .persisted(0.8), .removed, …
    print(update)                                // other garages' and processes' commits too
}
// snippet.end
// snippet.hide
}
do {
// snippet.show
// snippet.persisted
@Persisted(Player.volume, in: garage) var volume: Double
@Persisted(id: "install-id", in: garage, defaultValue: UUID(), defaultPersistence: .persistWhenNil)
var installID: UUID                              // made once, stored on first read
try $volume.persist(0.9)                         // the setter drops errors; this throws them
// snippet.end
// snippet.hide
print(volume, installID)                         // 0.9, and the identifier made once
}
