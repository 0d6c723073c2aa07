import Foundation

// The JSON values the graph encoder builds: objects and arrays as references, written into
// by the containers it hands out.

/// A JSON value being built. Objects and arrays are references, so that a container
/// handed out by an encoder keeps writing into the value its parent holds.
package enum EncodedSlot {
    case value(JSONValue)
    case object(ObjectBuilder)
    case array(ArrayBuilder)

    package var jsonValue: JSONValue {
        switch self {
        case .value(let value): return value
        case .object(let builder): return .object(builder.members())
        case .array(let builder): return .array(builder.elements.map(\.jsonValue))
        }
    }
}

/// The members of an object being encoded, in the order they were encoded.
package final class ObjectBuilder {
    /// One stored property, so that setting a member is one exclusive access, not three (each
    /// checked at run time, which cost more than the rest of `set`).
    private var contents = Members()

    private struct Members {
        var keys: [String] = []
        var slots: [EncodedSlot] = []
        /// Whether a key was encoded twice (the last value wins).
        var hasRepeatedKey = false

        mutating func set(_ slot: EncodedSlot, for key: String) {
            if keys.isEmpty {
                // One allocation each for most objects, rather than growing 1, 2, 4, 8.
                keys.reserveCapacity(8)
                slots.reserveCapacity(8)
            }
            if !hasRepeatedKey, keys.contains(key) {
                hasRepeatedKey = true
            }
            keys.append(key)
            slots.append(slot)
        }
    }

    package func set(_ slot: EncodedSlot, for key: String) {
        contents.set(slot, for: key)
    }

    /// The members, sorted by key: see ``writeOrder(canonical:)``.
    package func members() -> [JSONMember] {
        let members = contents
        return writeOrder(canonical: true).map { JSONMember(key: members.keys[$0], value: members.slots[$0].jsonValue) }
    }

    /// The positions of the members to write: in the order they were encoded, or, when
    /// `canonical`, sorted by key, which makes equal values encode to equal bytes whatever
    /// their `encode(to:)` does (a `Hashable` object's identifier is a hash of them). A key
    /// encoded twice is written once, with its last value.
    package func writeOrder(canonical: Bool) -> [Int] {
        let keys = contents.keys
        guard canonical || contents.hasRepeatedKey else { return Array(keys.indices) }
        var order = Array(keys.indices)
        order.sort { keys[$0] < keys[$1] || (keys[$0] == keys[$1] && $0 < $1) }
        var unique: [Int] = []
        unique.reserveCapacity(order.count)
        for index in order {
            if let last = unique.last, keys[last] == keys[index] {
                unique[unique.count - 1] = index
            } else {
                unique.append(index)
            }
        }
        if !canonical {
            unique.sort()
        }
        return unique
    }

    package func key(at index: Int) -> String { contents.keys[index] }
    package func slot(at index: Int) -> EncodedSlot { contents.slots[index] }
}

package final class ArrayBuilder {
    package var elements: [EncodedSlot] = []
}
