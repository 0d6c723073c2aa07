/// Parses UTF-8 JSON into a ``JSONValue``.
///
/// The reader never traps on bad input: anything that is not JSON, including invalid
/// UTF-8 in strings and nesting deeper than ``maximumDepth``, throws ``JSONReader/Failure``.
struct JSONReader {
    /// Why the bytes are not JSON, and where.
    struct Failure: Error, CustomStringConvertible {
        var reason: String
        var offset: Int
        var description: String { "\(reason) at byte \(offset)" }
    }

    /// Deeper documents are refused rather than risk exhausting the stack; the encoder
    /// refuses to park deeper values, so every parked object can be read back.
    static let maximumDepth = 512

    static func parse<Bytes: Collection>(_ bytes: Bytes) throws -> JSONValue where Bytes.Element == UInt8 {
        if let result = try bytes.withContiguousStorageIfAvailable({ try parse(buffer: $0) }) {
            return result
        }
        return try Array(bytes).withUnsafeBufferPointer { try parse(buffer: $0) }
    }

    static func parse(_ string: String) throws -> JSONValue {
        var string = string
        return try string.withUTF8 { try parse(buffer: $0) }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var reader = JSONReader(bytes: buffer)
        reader.skipWhitespace()
        let value = try reader.parseValue(depth: 0)
        reader.skipWhitespace()
        guard reader.index == buffer.count else {
            throw Failure(reason: "unexpected data after the JSON value", offset: reader.index)
        }
        return value
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

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

    private mutating func parseValue(depth: Int) throws -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of data") }
        if depth & 31 == 31, ThreadStack.isShort {
            return try parseValueOnFreshStack(depth: depth)
        }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["):
            return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw fail("unexpected character")
        }
    }

    /// Parses the value at `index` on a thread with a large stack: a deeply nested document
    /// read on a thread with a small one (see ``ThreadStack``).
    private mutating func parseValueOnFreshStack(depth: Int) throws -> JSONValue {
        var reader = self
        let value = try ThreadStack.run { try reader.parseValue(depth: depth) }
        index = reader.index
        return value
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

    private mutating func parseObject(depth: Int) throws -> JSONValue {
        guard depth <= Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        // Most objects have a few members: one allocation instead of growing 1, 2, 4, 8.
        members.reserveCapacity(8)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail("expected a key") }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            members.append(JSONMember(key: key, value: try parseValue(depth: depth)))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of data") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw fail("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws -> JSONValue {
        guard depth <= Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of data") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw fail("expected ',' or ']'")
        }
    }

    private mutating func parseNumber() throws -> String {
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
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func parseString() throws -> String {
        index += 1 // opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return try validatedString(slice)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string") }
            index += 1
        }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return try scratch.withUnsafeBufferPointer { try validatedString($0) }
            }
            if byte < 0x20 { throw fail("control character in string") }
            if byte != UInt8(ascii: "\\") {
                scratch.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
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
        throw fail("unterminated string")
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

    private func validatedString(_ slice: UnsafeBufferPointer<UInt8>) throws -> String {
        // `String(decoding:)` would silently replace invalid bytes; corrupt data must be reported.
        if slice.contains(where: { $0 >= 0x80 }) {
            var iterator = slice.makeIterator()
            var decoder = UTF8()
            decoding: while true {
                switch decoder.decode(&iterator) {
                case .scalarValue: continue
                case .emptyInput: break decoding
                case .error: throw fail("invalid UTF-8 in string")
                }
            }
        }
        return String(decoding: slice, as: UTF8.self)
    }
}
