/// Writes JSON: a ``JSONValue``, members in the order they are held; and strings, for a
/// writer of its own (a sync server's download page).
package enum JSONWriter {
    package static func string(from value: JSONValue) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        write(value, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    package static func bytes(from value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        write(value, into: &bytes)
        return bytes
    }

    package static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let flag):
            out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let text):
            out.append(contentsOf: text.utf8)
        case .string(let text):
            writeString(text, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
    package static let trueBytes: [UInt8] = Array("true".utf8)
    package static let falseBytes: [UInt8] = Array("false".utf8)
    package static let nullBytes: [UInt8] = Array("null".utf8)

    /// Appends `value` in decimal, as `String(value)` writes it.
    package static func writeInteger(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        writeInteger(value.magnitude, into: &out)
    }

    /// Appends `value` in decimal, as `String(value)` writes it.
    package static func writeInteger(_ value: UInt64, into out: inout [UInt8]) {
        if value < 10 {
            out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // UInt64.max has 20 digits: written backwards into 24 bytes on the stack.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var position = buffer.count
            var rest = value
            repeat {
                let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 10)
                position -= 1
                buffer[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remainder)
                rest = quotient
            } while rest != 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[position...]))
        }
    }

    /// Whether `utf8` holds a byte a JSON string escapes: a quote, a backslash, a control
    /// character. Eight bytes at a time (``StringScan``); bytes beyond ASCII are written as
    /// they are.
    private static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        var position = 0
        let raw = UnsafeRawBufferPointer(utf8)
        while position + 8 <= utf8.count {
            let word = raw.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            if StringScan.specialBytes(word, nonASCII: false) != 0 { return true }
            position += 8
        }
        while position < utf8.count {
            let byte = utf8[position]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            position += 1
        }
        return false
    }

    package static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: copy them whole, scanning their UTF-8 in place (the
        // `contains(where:)` of the UTF-8 view cost as much again as the copy).
        var text = text
        let copied = text.withUTF8 { utf8 -> Bool in
            guard !needsEscape(utf8) else { return false }
            out.append(contentsOf: utf8)
            return true
        }
        if copied {
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\\"))
            case 0x0A:
                out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
            case 0x0D:
                out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
            case 0x09:
                out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
            case 0x00..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
