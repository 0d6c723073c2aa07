import Foundation

/// The Swift values that are JSON scalars, encoded and decoded without a container.
///
/// A single protocol lets the coders recognise every scalar with one dynamic cast.
package protocol JSONPrimitive: Codable, SendableMetatype {
    func jsonValue(codingPath: CodingPath) throws -> JSONValue
    /// Appends the value's JSON (the bytes of ``jsonValue(codingPath:)``) to `out`; `false`,
    /// having written nothing, when it has none (a NaN): ``jsonValue(codingPath:)`` says why.
    func writeJSON(into out: inout [UInt8]) -> Bool
    static func decode(from value: JSONNode, codingPath: CodingPath) throws -> Self
}

extension JSONPrimitive {
    /// The JSON of `value`, whose type the caller knows to be `Self` (its ``ValueKind``):
    /// this saves a dynamic cast on every value.
    package static func jsonValue<V>(of value: V, codingPath: CodingPath) throws -> JSONValue {
        precondition(V.self == Self.self, "ValueKind classified \(V.self) as \(Self.self)")
        return try withUnsafePointer(to: value) { pointer in
            try pointer.withMemoryRebound(to: Self.self, capacity: 1) { try $0.pointee.jsonValue(codingPath: codingPath) }
        }
    }

    /// ``writeJSON(into:)`` of `value`, whose type the caller knows to be `Self`.
    package static func writeJSON<V>(of value: V, into out: inout [UInt8]) -> Bool {
        precondition(V.self == Self.self, "ValueKind classified \(V.self) as \(Self.self)")
        return withUnsafePointer(to: value) { pointer in
            pointer.withMemoryRebound(to: Self.self, capacity: 1) { $0.pointee.writeJSON(into: &out) }
        }
    }

    package static func typeMismatch(_ value: JSONNode, _ codingPath: CodingPath) -> DecodingError {
        if value.isNull {
            return .valueNotFound(Self.self, .init(
                codingPath: codingPath.keys, debugDescription: "Expected \(Self.self) but found null."))
        }
        return .typeMismatch(Self.self, .init(
            codingPath: codingPath.keys, debugDescription: "Expected \(Self.self) but found \(value.kindName)."))
    }
}

extension String: JSONPrimitive {
    package func jsonValue(codingPath: CodingPath) -> JSONValue { .string(self) }
    package func writeJSON(into out: inout [UInt8]) -> Bool {
        JSONWriter.writeString(self, into: &out)
        return true
    }
    package static func decode(from value: JSONNode, codingPath: CodingPath) throws -> String {
        guard let string = value.stringValue else { throw typeMismatch(value, codingPath) }
        return string
    }
}

extension Bool: JSONPrimitive {
    package func jsonValue(codingPath: CodingPath) -> JSONValue { .bool(self) }
    package func writeJSON(into out: inout [UInt8]) -> Bool {
        out.append(contentsOf: self ? JSONWriter.trueBytes : JSONWriter.falseBytes)
        return true
    }
    package static func decode(from value: JSONNode, codingPath: CodingPath) throws -> Bool {
        guard let flag = value.bool else { throw typeMismatch(value, codingPath) }
        return flag
    }
}

/// Integers keep their exact text, so `Int64.min` and `UInt64.max` survive.
package protocol JSONInteger: JSONPrimitive, FixedWidthInteger {}

extension JSONInteger {
    package func jsonValue(codingPath: CodingPath) -> JSONValue { .number(String(self)) }
    package func writeJSON(into out: inout [UInt8]) -> Bool {
        if Self.isSigned {
            JSONWriter.writeInteger(Int64(truncatingIfNeeded: self), into: &out)
        } else {
            JSONWriter.writeInteger(UInt64(truncatingIfNeeded: self), into: &out)
        }
        return true
    }
    package static func decode(from value: JSONNode, codingPath: CodingPath) throws -> Self {
        if let integer = value.integer(Self.self) { return integer }
        guard let text = value.numberText else { throw typeMismatch(value, codingPath) }
        if let integer = Self(text) { return integer }
        // "3.0" or "1e3": accept it when it is a whole number that fits.
        if let double = Double(text), let integer = Self(exactly: double) { return integer }
        throw DecodingError.dataCorrupted(.init(
            codingPath: codingPath.keys, debugDescription: "The number \(text) does not fit in \(Self.self)."))
    }
}

extension Int: JSONInteger {}
extension Int8: JSONInteger {}
extension Int16: JSONInteger {}
extension Int32: JSONInteger {}
extension Int64: JSONInteger {}
extension UInt: JSONInteger {}
extension UInt8: JSONInteger {}
extension UInt16: JSONInteger {}
extension UInt32: JSONInteger {}
extension UInt64: JSONInteger {}

/// Floating-point values are written in their shortest exact form; NaN and infinities
/// are refused, as `JSONEncoder` does by default.
package protocol JSONFloat: JSONPrimitive, BinaryFloatingPoint, LosslessStringConvertible {}

extension JSONFloat {
    package func jsonValue(codingPath: CodingPath) throws -> JSONValue {
        guard isFinite else {
            throw EncodingError.invalidValue(self, .init(
                codingPath: codingPath.keys,
                debugDescription: "Unable to encode \(Self.self).\(self) directly in JSON."))
        }
        return .number(description)
    }

    package func writeJSON(into out: inout [UInt8]) -> Bool {
        guard isFinite else { return false }
        out.append(contentsOf: description.utf8)
        return true
    }

    package static func decode(from value: JSONNode, codingPath: CodingPath) throws -> Self {
        // A `Float` only when the `Double` is one: then it is also the `Float` nearest the text.
        if let exact = value.exactDouble, let number = Self(exactly: exact) { return number }
        guard let text = value.numberText else { throw typeMismatch(value, codingPath) }
        guard let number = Self(text), number.isFinite else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath.keys, debugDescription: "The number \(text) is not a valid \(Self.self)."))
        }
        return number
    }
}

extension Double: JSONFloat {}
extension Float: JSONFloat {}

/// A sync status is its raw value: decoding it needs no container.
extension SyncStatus: JSONPrimitive {
    package func jsonValue(codingPath: CodingPath) -> JSONValue { .number(String(rawValue)) }
    package func writeJSON(into out: inout [UInt8]) -> Bool {
        JSONWriter.writeInteger(Int64(rawValue), into: &out)
        return true
    }
    package static func decode(from value: JSONNode, codingPath: CodingPath) throws -> SyncStatus {
        let rawValue = try Int.decode(from: value, codingPath: codingPath)
        guard let status = SyncStatus(rawValue: rawValue) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath.keys, debugDescription: "Cannot initialize SyncStatus from invalid Int value \(rawValue)"))
        }
        return status
    }
}

/// An array of ``JSONPrimitive``s, which the graph decoder reads without a container.
package protocol PrimitiveArray: SendableMetatype {
    /// The array `value`, an array, holds.
    static func decodeElements(from value: JSONNode, codingPath: CodingPath) throws -> Self
    /// Appends the JSON of `value`, an array of this type, to `out`; `false` when an element has
    /// none (a NaN), having written part of it: the caller encodes it again element by element,
    /// which names the element.
    static func writeElements<V>(of value: V, into out: inout [UInt8]) -> Bool
}

extension Array: PrimitiveArray where Element: JSONPrimitive {
    package static func writeElements<V>(of value: V, into out: inout [UInt8]) -> Bool {
        precondition(V.self == Self.self, "ValueKind classified \(V.self) as \(Self.self)")
        return withUnsafePointer(to: value) { pointer in
            pointer.withMemoryRebound(to: Self.self, capacity: 1) { array in
                out.append(UInt8(ascii: "["))
                var first = true
                for element in array.pointee {
                    if !first { out.append(UInt8(ascii: ",")) }
                    first = false
                    guard element.writeJSON(into: &out) else { return false }
                }
                out.append(UInt8(ascii: "]"))
                return true
            }
        }
    }

    package static func decodeElements(from value: JSONNode, codingPath: CodingPath) throws -> [Element] {
        let count = value.count ?? 0
        var elements: [Element] = []
        elements.reserveCapacity(count)
        var element = value.firstChild
        for position in 0..<count {
            do {
                elements.append(try Element.decode(from: element, codingPath: .root))
            } catch {
                // The path is built only when there is an error to report.
                elements.append(try Element.decode(from: element, codingPath: CodingPath(
                    node: codingPath.node, appending: GarageCodingKey(intValue: position))))
            }
            element = element.nextSibling
        }
        return elements
    }
}
