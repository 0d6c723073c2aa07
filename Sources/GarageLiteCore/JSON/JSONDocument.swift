/// A parsed JSON document, as its bytes and a flat list of entries over them: the graph
/// decoder reads a row's values where they are, without building a tree of ``JSONValue``s
/// (one allocation per string, array and object) that it would read once and free.
///
/// Entries are in document order. A container's entry is followed by its children's (an
/// object's as key, value, key, value…), and says where its subtree ends, so that a member
/// or element is found by skipping whole subtrees. ``JSONReader`` builds documents and has
/// checked everything: a string's UTF-8 and escapes, numbers, nesting. Reading a node never
/// fails for the document's sake.
package final class JSONDocument: Sendable {
    package enum Kind: UInt8 {
        case null, `true`, `false`, number, string, array, object
    }

    package struct Entry {
        package var kind: Kind
        /// A string's content holds escapes, to be unescaped when it is read.
        package var isEscaped = false
        /// A string's first byte after its quote; a number's first byte; a container's bracket.
        package var start: Int32
        /// The bytes of a string's content or of a number; the members or elements of a container.
        package var length: Int32
        /// The index of the entry after this one's subtree.
        package var end: Int32
    }

    package let bytes: [UInt8]
    package let entries: [Entry]

    package init(bytes: [UInt8], entries: [Entry]) {
        self.bytes = bytes
        self.entries = entries
    }

    /// The document's value.
    package var root: JSONNode { JSONNode(document: self, index: 0) }

    /// A document of `value`, for the few decoding paths that rewrite a value (a reference
    /// collection without its missing references, an anonymous object given its status).
    package convenience init(_ value: JSONValue) {
        // A value the writer wrote is JSON: the reader accepts it.
        try! self.init(parsing: JSONWriter.bytes(from: value))
    }

    /// The document the bytes hold.
    ///
    /// - throws: ``JSONReader/Failure`` when they are not JSON.
    package convenience init<Bytes: Collection>(parsing bytes: Bytes) throws where Bytes.Element == UInt8 {
        let owned = Array(bytes)
        let entries = try owned.withUnsafeBufferPointer { try JSONReader.entries(of: $0) }
        self.init(bytes: owned, entries: entries)
    }

    /// The document the text holds.
    package convenience init(parsing text: String) throws {
        try self.init(parsing: text.utf8)
    }

    package static let emptyArray = JSONDocument(.array([]))
    package static let null = JSONDocument(.null)
}

/// One value of a ``JSONDocument``.
package struct JSONNode {
    package let document: JSONDocument
    package let index: Int

    private var entry: JSONDocument.Entry { document.entries[index] }

    package var kind: JSONDocument.Kind { entry.kind }

    package var isNull: Bool { entry.kind == .null }

    package var bool: Bool? {
        switch entry.kind {
        case .true: return true
        case .false: return false
        default: return nil
        }
    }

    /// A string's value.
    package var stringValue: String? {
        let isEscaped = entry.isEscaped
        return content(of: .string) { isEscaped ? JSONReader.unescaped($0) : String(decoding: $0, as: UTF8.self) }
    }

    /// A number's text, as written.
    package var numberText: String? {
        content(of: .number) { String(decoding: $0, as: UTF8.self) }
    }

    /// `body`'s answer for the bytes of this value's content (a string's between its quotes,
    /// a number's text), when the value is of `kind`; `nil` otherwise.
    private func content<R>(of kind: JSONDocument.Kind, _ body: (UnsafeBufferPointer<UInt8>) -> R?) -> R? {
        let entry = entry
        guard entry.kind == kind else { return nil }
        return document.bytes.withUnsafeBufferPointer { buffer in
            body(UnsafeBufferPointer(rebasing: buffer[Int(entry.start)..<Int(entry.start + entry.length)]))
        }
    }

    /// A number's value as an integer of type `I`, when its text is digits (and a sign) that
    /// fit; `nil` otherwise, including for "3.0" and "1e3", which the caller reads from the text.
    package func integer<I: FixedWidthInteger>(_ type: I.Type) -> I? {
        content(of: .number) { text -> I? in
            let negative = text[0] == UInt8(ascii: "-")
            guard !negative || I.isSigned else { return nil }
            var value: I = 0
            for byte in text.dropFirst(negative ? 1 : 0) {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
                let (next, overflow2) = negative
                    ? shifted.subtractingReportingOverflow(I(digit)) : shifted.addingReportingOverflow(I(digit))
                guard !overflow, !overflow2 else { return nil }
                value = next
            }
            return value
        }
    }

    /// An array's first element, an object's first key (when it has one).
    package var firstChild: JSONNode { JSONNode(document: document, index: index + 1) }

    /// The value after this one's subtree: the next element or key of its container.
    package var nextSibling: JSONNode { JSONNode(document: document, index: Int(entry.end)) }

    /// A number's value as a `Double` when one correctly rounded operation gives it: at most
    /// 2^53 as an integer of its digits, times or divided by a power of ten up to 10^22, each
    /// exact in a `Double` (Clinger's fast path); `nil` otherwise, for the caller to read the
    /// text as `strtod` does.
    package var exactDouble: Double? {
        content(of: .number) { text -> Double? in
            let negative = text[0] == UInt8(ascii: "-")
            var position = negative ? 1 : 0
            let end = text.count
            var mantissa: UInt64 = 0
            var exponent = 0
            var inFraction = false
            while position < end {
                let byte = text[position]
                if byte == UInt8(ascii: ".") {
                    inFraction = true
                } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                    break
                } else {
                    mantissa = mantissa &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                    guard mantissa <= 1 << 53 else { return nil }
                    if inFraction { exponent -= 1 }
                }
                position += 1
            }
            if position < end {
                // The exponent: "e", a sign, digits (the reader checked them).
                position += 1
                var sign = 1
                if text[position] == UInt8(ascii: "-") { sign = -1; position += 1 }
                else if text[position] == UInt8(ascii: "+") { position += 1 }
                var written = 0
                while position < end {
                    written = written * 10 + Int(text[position] &- UInt8(ascii: "0"))
                    guard written <= 400 else { return nil }
                    position += 1
                }
                exponent += sign * written
            }
            let value: Double
            if mantissa == 0 {
                value = 0
            } else if exponent >= 0 {
                guard exponent <= 22 else { return nil }
                value = Double(mantissa) * Self.powersOfTen[exponent]
            } else {
                guard exponent >= -22 else { return nil }
                value = Double(mantissa) / Self.powersOfTen[-exponent]
            }
            return negative ? -value : value
        }
    }

    private static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { product, _ in product * 10 }
    }

    /// The number of an array's elements or an object's members; `nil` for a scalar.
    package var count: Int? {
        let entry = entry
        return entry.kind == .array || entry.kind == .object ? Int(entry.length) : nil
    }

    /// An array's elements, in order; empty for anything else.
    package var elements: [JSONNode] {
        guard entry.kind == .array else { return [] }
        var nodes: [JSONNode] = []
        nodes.reserveCapacity(Int(entry.length))
        var child = firstChild
        for _ in 0..<entry.length {
            nodes.append(child)
            child = child.nextSibling
        }
        return nodes
    }

    /// An object's members, in document order; empty for anything else.
    package var members: [(key: JSONNode, value: JSONNode)] {
        guard entry.kind == .object else { return [] }
        var members: [(key: JSONNode, value: JSONNode)] = []
        members.reserveCapacity(Int(entry.length))
        var key = firstChild
        for _ in 0..<entry.length {
            let value = key.nextSibling
            members.append((key, value))
            key = value.nextSibling
        }
        return members
    }

    /// An object's member named `key`, the first one when the key is repeated (as SQLite's
    /// JSON functions read it); `nil` when it has none or is not an object.
    package func member(_ key: String) -> JSONNode? {
        let entry = entry
        guard entry.kind == .object, entry.length > 0 else { return nil }
        var key = key
        return key.withUTF8 { key in
            document.bytes.withUnsafeBufferPointer { bytes in
                document.entries.withUnsafeBufferPointer { entries in
                    var child = index + 1
                    for _ in 0..<entry.length {
                        if Self.matches(entries[child], key, in: bytes) {
                            return JSONNode(document: document, index: child + 1)
                        }
                        child = Int(entries[child + 1].end)
                    }
                    return nil
                }
            }
        }
    }

    /// Whether the key entry `keyEntry` is `key`.
    private static func matches(_ keyEntry: JSONDocument.Entry, _ key: UnsafeBufferPointer<UInt8>,
                                in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = Int(keyEntry.start)
        if keyEntry.isEscaped {
            return Array(JSONReader.unescaped(UnsafeBufferPointer(rebasing: bytes[start..<start + Int(keyEntry.length)])).utf8)
                .elementsEqual(key)
        }
        guard Int(keyEntry.length) == key.count else { return false }
        for offset in 0..<key.count where bytes[start + offset] != key[offset] {
            return false
        }
        return true
    }

    /// A short name of the kind of value, for error messages.
    package var kindName: String {
        switch entry.kind {
        case .null: return "null"
        case .true, .false: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The value as a tree, for the code that rewrites or compares values.
    package var value: JSONValue { tree(depth: 0) }

    private func tree(depth: Int) -> JSONValue {
        switch entry.kind {
        case .null: return .null
        case .true: return .bool(true)
        case .false: return .bool(false)
        case .number: return .number(numberText!)
        case .string: return .string(stringValue!)
        case .array, .object:
            // A deep document read on a thread with a small stack continues on a fresh one.
            if depth & 31 == 31, ThreadStack.isShort, let tree = try? ThreadStack.run({ children(depth: depth) }) {
                return tree
            }
            return children(depth: depth)
        }
    }

    private func children(depth: Int) -> JSONValue {
        if entry.kind == .array {
            return .array(elements.map { $0.tree(depth: depth + 1) })
        }
        return .object(members.map { JSONMember(key: $0.key.stringValue!, value: $0.value.tree(depth: depth + 1)) })
    }
}
