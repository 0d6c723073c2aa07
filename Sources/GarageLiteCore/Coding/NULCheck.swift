import Foundation

// A string holding U+0000 (NUL) is refused when parked, on every engine: SQLite's text
// functions and bound parameters stop at it (a query would compare "a" for "a\0b"), and
// PostgreSQL's text can't hold it at all (every query of the property would fail). Written
// JSON escapes it as `\u0000`, which is what this looks for, once per row: the bytes a row's
// JSON would hold with no backslash (most rows) cost one `memchr`.
extension JSONWriter {
    /// The coding path to the first string (a value, or a key of an object) in `json` that holds
    /// U+0000, or `nil` when none does.
    package static func pathOfNUL(in json: [UInt8]) -> [any CodingKey]? {
        guard holdsEscapedNUL(json), let document = try? JSONReader.parse(json) else { return nil }
        return path(toNULIn: document)
    }

    /// `path` as an error names it: `.title`, `.attrs."k"[2]`; "the root" when empty.
    package static func describe(_ path: [any CodingKey]) -> String {
        let named = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue.debugDescription)" }.joined()
        return named.isEmpty ? "the root" : named
    }

    /// Whether `json` holds the escape `\u0000` (after an odd run of backslashes: `\\u0000` is
    /// a backslash and the text `u0000`).
    private static func holdsEscapedNUL(_ json: [UInt8]) -> Bool {
        json.withUnsafeBufferPointer { bytes -> Bool in
            guard let base = bytes.baseAddress else { return false }
            var position = 0
            while position < bytes.count,
                  let found = memchr(base + position, Int32(UInt8(ascii: "\\")), bytes.count - position) {
                var index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var run = 0
                while index < bytes.count, bytes[index] == UInt8(ascii: "\\") {
                    run += 1
                    index += 1
                }
                if run % 2 == 1, index + 5 <= bytes.count, Array(bytes[index..<index + 5]) == Array("u0000".utf8) {
                    return true
                }
                position = index
            }
            return false
        }
    }

    private static func path(toNULIn value: JSONValue) -> [any CodingKey]? {
        switch value {
        case .string(let text): return text.containsNUL ? [] : nil
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let path = path(toNULIn: element) { return [GarageCodingKey(intValue: index)] + path }
            }
        case .object(let members):
            for member in members {
                if member.key.containsNUL { return [GarageCodingKey(stringValue: member.key)] }
                if let path = path(toNULIn: member.value) { return [GarageCodingKey(stringValue: member.key)] + path }
            }
        case .null, .bool, .number: break
        }
        return nil
    }
}
