import Foundation
import Testing
import GarageLiteSQLite

/// `SQLiteConnection.utf8Text`, which reads every text column of a row: the text when the bytes
/// are UTF-8, `nil` for any other bytes, never a repaired text.
@Suite("SQLite: UTF-8 columns", .firstPassOnly)
struct UTF8TextTests {
    private func text(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer { SQLiteConnection.utf8Text($0) }
    }

    @Test func validBytesReadAsTheirText() {
        for sample in ["", "a", "note-0001", "café", "日本語のノート", "🚲 and 🧾", "\u{FFFD} stays", "nul\u{0}inside"] {
            #expect(text(Array(sample.utf8)) == sample)
        }
    }

    @Test func bytesThatAreNotUTF8ReadAsNil() {
        let invalid: [[UInt8]] = [
            [0xFF], [0x61, 0xFE, 0x62], [0xE2, 0x82], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0x80], [0xEF, 0xBF, 0xBD, 0xFF], Array("ok".utf8) + [0xC3],
        ]
        for bytes in invalid {
            #expect(text(bytes) == nil, "\(bytes)")
        }
    }
}
