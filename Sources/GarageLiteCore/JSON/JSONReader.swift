/// Parses UTF-8 JSON into a ``JSONDocument`` (or a tree of ``JSONValue``s).
///
/// The reader never traps on bad input: anything that is not JSON, including invalid
/// UTF-8 in strings and nesting deeper than ``maximumDepth``, throws ``JSONReader/Failure``.
package struct JSONReader {
    /// Why the bytes are not JSON, and where.
    package struct Failure: Error, CustomStringConvertible {
        package var reason: String
        package var offset: Int
        package var description: String { "\(reason) at byte \(offset)" }
    }

    /// Deeper documents are refused rather than risk exhausting the stack; the encoder
    /// refuses to park deeper values, so every parked object can be read back.
    package static let maximumDepth = 512

    /// The tree of the JSON the bytes hold.
    package static func parse<Bytes: Collection>(_ bytes: Bytes) throws -> JSONValue where Bytes.Element == UInt8 {
        try JSONDocument(parsing: bytes).root.value
    }

    package static func parse(_ string: String) throws -> JSONValue {
        try JSONDocument(parsing: string.utf8).root.value
    }

    /// The entries of the document `buffer` holds (see ``JSONDocument``).
    package static func entries(of buffer: UnsafeBufferPointer<UInt8>) throws -> [JSONDocument.Entry] {
        guard buffer.count < Int32.max else { throw Failure(reason: "a document larger than 2 GiB", offset: 0) }
        var reader = JSONReader(bytes: buffer)
        // About one entry every 12 bytes for the rows of typical models: one allocation, mostly.
        reader.entries.reserveCapacity(buffer.count / 12 + 4)
        reader.skipWhitespace()
        try reader.parseValues()
        reader.skipWhitespace()
        guard reader.index == buffer.count else {
            throw Failure(reason: "unexpected data after the JSON value", offset: reader.index)
        }
        return reader.entries
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var entries: [JSONDocument.Entry] = []

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private func fail(_ reason: String) -> Failure {
        Failure(reason: reason, offset: index)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Reads one value, containers included, without recursion: the open containers are a
    /// stack of entries, so that nesting costs no thread stack.
    private mutating func parseValues() throws {
        var open: [Int] = []
        while true {
            // A value is expected at `index`.
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of data") }
            let start = Int32(index)
            switch bytes[index] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = bytes[index] == UInt8(ascii: "{")
                guard open.count < Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth) levels") }
                open.append(entries.count)
                entries.append(.init(kind: isObject ? .object : .array, start: start, length: 0, end: 0))
                index += 1
                skipWhitespace()
                if index < bytes.count, bytes[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    index += 1
                    entries[open.removeLast()].end = Int32(entries.count)
                } else {
                    if isObject { try parseKey() }
                    continue
                }
            case UInt8(ascii: "\""):
                try parseString()
            case UInt8(ascii: "t"):
                try expectLiteral("true"); entries.append(.init(kind: .true, start: start, length: 4, end: 0))
            case UInt8(ascii: "f"):
                try expectLiteral("false"); entries.append(.init(kind: .false, start: start, length: 5, end: 0))
            case UInt8(ascii: "n"):
                try expectLiteral("null"); entries.append(.init(kind: .null, start: start, length: 4, end: 0))
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try parseNumber()
            default:
                throw fail("unexpected character")
            }
            // A value ended: a scalar, or a container that closed.
            while true {
                if entries[entries.count - 1].end == 0 { entries[entries.count - 1].end = Int32(entries.count) }
                guard let container = open.last else { return }
                entries[container].length += 1
                skipWhitespace()
                guard index < bytes.count else { throw fail("unexpected end of data") }
                let isObject = entries[container].kind == .object
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    if isObject { try parseKey() }
                    break
                }
                guard bytes[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw fail(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
                }
                index += 1
                entries[open.removeLast()].end = Int32(entries.count)
            }
        }
    }

    /// Reads an object's key and its colon.
    private mutating func parseKey() throws {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
        try parseString()
        entries[entries.count - 1].end = Int32(entries.count)
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
        index += 1
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw fail("unexpected end of data") }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw fail("invalid literal")
        }
        index += count
    }

    private mutating func parseNumber() throws {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        entries.append(.init(kind: .number, start: Int32(start), length: Int32(index - start), end: 0))
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Reads a string, checking its UTF-8 and its escapes, into an entry of its content.
    private mutating func parseString() throws {
        index += 1 // opening quote
        let start = index
        // Fast path, with the position in a local: no escapes.
        var position = index
        var high: UInt8 = 0
        #if _endian(little)
        // Eight bytes at a time to the first that is a quote, a backslash, a control character
        // or beyond ASCII (the lowest byte in memory, on a little-endian machine).
        let raw = UnsafeRawBufferPointer(bytes)
        while position + 8 <= bytes.count {
            let flagged = StringScan.specialBytes(raw.loadUnaligned(fromByteOffset: position, as: UInt64.self),
                                                  nonASCII: true)
            guard flagged == 0 else {
                position += flagged.trailingZeroBitCount >> 3
                break
            }
            position += 8
        }
        #endif
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                index = position
                if high >= 0x80 { try validateUTF8(UnsafeBufferPointer(rebasing: bytes[start..<position])) }
                entries.append(.init(kind: .string, start: Int32(start), length: Int32(position - start), end: 0))
                index = position + 1
                return
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 {
                index = position
                throw fail("control character in string")
            }
            high |= byte
            position += 1
        }
        index = position
        // With escapes: checked by unescaping, which reading the string does again.
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try scratch.withUnsafeBufferPointer { try validateUTF8($0) }
                entries.append(.init(kind: .string, isEscaped: true, start: Int32(start), length: Int32(index - start), end: 0))
                index += 1
                return
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte != UInt8(ascii: "\\") {
                scratch.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            try unescape(into: &scratch)
        }
        throw fail("unterminated string")
    }

    /// Appends the character of the escape after the backslash at `index - 1`.
    private mutating func unescape(into scratch: inout [UInt8]) throws {
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalarValue = try parseHex4()
            if (0xD800..<0xDC00).contains(scalarValue) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"),
                      bytes[index + 1] == UInt8(ascii: "u") else { throw fail("unpaired surrogate") }
                index += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw fail("invalid unicode escape") }
            scratch.append(contentsOf: String(Character(scalar)).utf8)
        default:
            throw fail("invalid escape")
        }
    }

    /// The string of the content of an escaped string the reader accepted.
    package static func unescaped(_ content: UnsafeBufferPointer<UInt8>) -> String {
        var reader = JSONReader(bytes: content)
        var scratch: [UInt8] = []
        scratch.reserveCapacity(content.count)
        while reader.index < content.count {
            let byte = content[reader.index]
            reader.index += 1
            if byte == UInt8(ascii: "\\") {
                // Checked when the document was read.
                try! reader.unescape(into: &scratch)
            } else {
                scratch.append(byte)
            }
        }
        return String(decoding: scratch, as: UTF8.self)
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("invalid unicode escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid unicode escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// `String(decoding:)` would silently replace invalid bytes; corrupt data must be reported.
    private func validateUTF8(_ slice: UnsafeBufferPointer<UInt8>) throws {
        var iterator = slice.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return
            case .error: throw fail("invalid UTF-8 in string")
            }
        }
    }
}
