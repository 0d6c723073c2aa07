// Writing what an encoder built (see `EncodedSlot`), without making a `JSONValue` of it first.
extension JSONWriter {
    /// Writes what an encoder built, without making a ``JSONValue`` of it first; members in
    /// canonical order (sorted by key) or in the order they were encoded.
    package static func bytes(from slot: EncodedSlot, canonical: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        write(slot, canonical: canonical, into: &bytes)
        return bytes
    }

    /// Appends what an encoder built to `out` (see ``bytes(from:canonical:)``).
    package static func write(_ slot: EncodedSlot, canonical: Bool, into out: inout [UInt8]) {
        switch slot {
        case .value(let value):
            write(value, into: &out)
        case .array(let builder):
            out.append(UInt8(ascii: "["))
            for (index, element) in builder.elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, canonical: canonical, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let builder):
            out.append(UInt8(ascii: "{"))
            for (position, index) in builder.writeOrder(canonical: canonical).enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                writeString(builder.key(at: index), into: &out)
                out.append(UInt8(ascii: ":"))
                write(builder.slot(at: index), canonical: canonical, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
