import Foundation

/// Writes one row's JSON as its object's `encode(to:)` runs: each member goes into the bytes
/// when it is encoded, with no tree of containers built first (``EncodedSlot``), and one
/// encoder serves every nested value of the row.
///
/// It relies on the order every synthesized `encode(to:)` keeps, and nearly every hand-written
/// one: a value is finished before its parent writes the next member. When an `encode(to:)`
/// goes back to a container it has left (a nested container filled after its parent wrote
/// more), writes a key twice (the last value wins), asks for `superEncoder()`, or throws
/// through a container, the stream gives up (``encodeRow(_:)`` returns `nil`) and the row is
/// encoded again with the tree (``RowEncoding/box(_:at:isRowObject:tagged:)``), which takes
/// any order: the JSON is the same either way, byte for byte.
///
/// Values the tree sorts (sets, dictionaries) or tags (a registered subclass's instance), and
/// dates under a `.custom` strategy, are built with the tree and written in place.
///
/// The state lives behind a pointer the encoder owns, so that the containers (structs holding
/// the encoder) write into it with no run-time exclusivity check per byte.
package final class StreamEncoder: Encoder {
    /// The row being written: its references, and whether its status and revision are columns.
    package private(set) var row: RowEncoding
    /// The stream's state (see above); the containers write through it.
    let state: UnsafeMutablePointer<State>

    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The path of the value being encoded.
    package var codingPath: [any CodingKey] {
        let value = state.pointee.value
        return path(framesBelow: value.depth, then: value.pathKey).keys
    }

    package init(row: RowEncoding) {
        self.row = row
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    deinit {
        state.pointee.frames.deallocate()
        state.pointee.keys.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The JSON of `object`, the object of `row`; `nil` when the stream gave up (see above), and
    /// the caller encodes it with the tree, which also throws the error that made it give up.
    ///
    /// One encoder writes many rows, one after the other, reusing its buffers: the bytes
    /// returned are best dropped before the next row, which then needs no new buffer.
    package func encodeRow<T: Encodable>(_ object: T, of row: RowEncoding) -> [UInt8]? {
        self.row = row
        state.pointee.reset()
        do {
            try encodeValue(object, depth: 0, pathKey: .none, isRowObject: true)
        } catch {
            return nil
        }
        return state.pointee.isBroken ? nil : state.pointee.bytes
    }

    // MARK: - State

    /// Where a value lives in its parent: how a coding path is made, only when one is asked for.
    enum PathKey {
        case none
        case key(any CodingKey)
        case index(Int)
    }

    /// An object or array being written.
    struct Frame {
        /// Tells this frame from one opened later at the same depth: a container holds it.
        var serial: UInt32
        var isObject: Bool
        /// Members or elements written.
        var count: Int
        /// One bit per key written (``keyBit(start:end:)``): a key whose bit is set is compared
        /// with the frame's keys.
        var keyBits: UInt64
        /// Where the frame's keys start in ``State/keys``.
        var keysStart: Int
    }

    /// The value `encode(to:)` is running for: the encoder's `container(keyedBy:)`,
    /// `unkeyedContainer()` and `singleValueContainer()` write it.
    struct Value {
        var serial: UInt32 = 0
        /// Its depth, which is also the index its container's frame gets.
        var depth = 0
        var pathKey = PathKey.none
        /// The serial of the frame opened for it (0: none).
        var container: UInt32 = 0
        var isWritten = false
    }

    struct State {
        var bytes: [UInt8] = []
        var frames = TrivialStack<Frame>(capacity: 16)
        /// Each frame's place in its parent, beside ``frames`` (kept apart: a frame is trivial).
        var pathKeys: [PathKey] = []
        /// The byte ranges of the keys written in the open objects, frame after frame.
        var keys = TrivialStack<Range<Int>>(capacity: 32)
        var serial: UInt32 = 0
        var value = Value()
        /// The stream gave up: the tree encodes the row.
        var isBroken = false

        init() {
            bytes.reserveCapacity(512)
            pathKeys.reserveCapacity(16)
        }

        /// Ready for the next row, keeping the buffers.
        mutating func reset() {
            bytes.removeAll(keepingCapacity: true)
            frames.removeAll()
            pathKeys.removeAll(keepingCapacity: true)
            keys.removeAll()
            value = Value()
            isBroken = false
        }
    }

    /// A stack of trivial values behind a pointer, read and written with no uniqueness check
    /// (an array's, on every access, cost more than the rest of writing a member). Freed by
    /// ``deallocate()``.
    struct TrivialStack<Element> {
        private(set) var base: UnsafeMutablePointer<Element>
        private(set) var count = 0
        private var capacity: Int

        init(capacity: Int) {
            base = .allocate(capacity: capacity)
            self.capacity = capacity
        }

        mutating func append(_ element: Element) {
            if count == capacity {
                let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
                larger.moveInitialize(from: base, count: count)
                base.deallocate()
                base = larger
                capacity *= 2
            }
            (base + count).initialize(to: element)
            count += 1
        }

        mutating func removeLast() -> Element {
            count -= 1
            return base[count]
        }

        /// Keeps the first `newCount` elements.
        mutating func truncate(to newCount: Int) {
            count = min(count, newCount)
        }

        mutating func removeAll() {
            count = 0
        }

        func deallocate() {
            base.deallocate()
        }
    }

    /// Thrown through a container when the stream gives up (caught by ``encodeRow(_:)``).
    private struct GaveUp: Error {}

    private func giveUp() -> GaveUp {
        state.pointee.isBroken = true
        return GaveUp()
    }

    // MARK: - Values

    /// Writes `value` at the current position (its key or its comma already written).
    func encodeValue<T: Encodable>(_ value: T, depth: Int, pathKey: @autoclosure () -> PathKey,
                                               isRowObject: Bool = false) throws {
        let info = TypeInfo.of(T.self)
        let kind = info.kind
        if case .primitive(let primitive) = kind {
            if !primitive.writeJSON(of: value, into: &state.pointee.bytes) {
                _ = try primitive.jsonValue(of: value, codingPath: path(framesBelow: depth, then: pathKey()))
            }
            return
        }
        if depth >= JSONReader.maximumDepth {
            // The tree throws the error that says so.
            return try writeTree(value, depth: depth, pathKey: pathKey(), isRowObject: isRowObject)
        }
        if depth & 7 == 0, ThreadStack.isShort {
            // A deeply nested value on a thread with a small stack (see `ThreadStack`).
            return try ThreadStack.run({
                try encodeValue(value, depth: depth, pathKey: pathKey(), isRowObject: isRowObject)
            }, context: row.graph.context)
        }
        switch kind {
        case .primitiveArray(let array):
            let mark = state.pointee.bytes.count
            if array.writeElements(of: value, into: &state.pointee.bytes) { return }
            state.pointee.bytes.removeSubrange(mark...)
        case .unordered:
            return try writeTree(value, depth: depth, pathKey: pathKey(), isRowObject: isRowObject)
        case .date:
            if case .custom = row.graph.dateStrategy {
                return try writeTree(value, depth: depth, pathKey: pathKey(), isRowObject: isRowObject)
            }
        default:
            break
        }
        if let scalar = try row.scalarJSON(value, kind: kind, isRowObject: isRowObject,
                                           at: path(framesBelow: depth, then: pathKey())) {
            JSONWriter.write(scalar, into: &state.pointee.bytes)
            return
        }
        if info.isClass, type(of: value) != T.self {
            return try writeTree(value, depth: depth, pathKey: pathKey(), isRowObject: isRowObject)
        }
        let parent = state.pointee.value
        state.pointee.serial &+= 1
        state.pointee.value = Value(serial: state.pointee.serial, depth: depth, pathKey: pathKey())
        try value.encode(to: self)
        guard !state.pointee.isBroken, state.pointee.frames.count >= depth else { throw giveUp() }
        closeFrames(downTo: depth)
        if !state.pointee.value.isWritten {
            // Nothing encoded: `{}`, as JSONEncoder writes.
            state.pointee.bytes.append(UInt8(ascii: "{"))
            state.pointee.bytes.append(UInt8(ascii: "}"))
        }
        state.pointee.value = parent
    }

    /// Writes `value` as the tree builds it.
    private func writeTree<T: Encodable>(_ value: T, depth: Int, pathKey: PathKey, isRowObject: Bool) throws {
        let slot = try row.box(value, at: path(framesBelow: depth, then: pathKey), isRowObject: isRowObject)
        JSONWriter.write(slot, canonical: false, into: &state.pointee.bytes)
    }

    /// The path through the first `depth` frames, then `last`.
    func path(framesBelow depth: Int, then last: PathKey) -> CodingPath {
        var path = CodingPath.root
        let pathKeys = state.pointee.pathKeys
        for index in 0..<min(depth, pathKeys.count) {
            path = Self.appending(pathKeys[index], to: path)
        }
        return Self.appending(last, to: path)
    }

    private static func appending(_ key: PathKey, to path: CodingPath) -> CodingPath {
        switch key {
        case .none: return path
        case .key(let key): return path.appending(key)
        case .index(let index): return path.appending(index: index)
        }
    }

    // MARK: - Frames

    /// Opens an object or array for the value being encoded, or goes on with the one it has.
    private func openValueContainer(isObject: Bool) -> (index: Int, serial: UInt32) {
        let value = state.pointee.value
        if value.isWritten {
            // A second container of the same value (a subclass's `encode(to:)` after its
            // superclass's): the same object, unless it was left or is of the other kind.
            let frames = state.pointee.frames
            guard value.container != 0, value.depth < frames.count, frames.base[value.depth].serial == value.container,
                  frames.base[value.depth].isObject == isObject, !state.pointee.isBroken
            else {
                _ = giveUp()
                return (value.depth, 0)
            }
            closeFrames(downTo: value.depth + 1)
            return (value.depth, value.container)
        }
        guard state.pointee.frames.count == value.depth, !state.pointee.isBroken else {
            _ = giveUp()
            return (value.depth, 0)
        }
        state.pointee.value.isWritten = true
        let serial = pushFrame(isObject: isObject, pathKey: value.pathKey)
        state.pointee.value.container = serial
        return (value.depth, serial)
    }

    /// Opens an object or array where the bytes are (a key or comma written).
    private func pushFrame(isObject: Bool, pathKey: PathKey) -> UInt32 {
        state.pointee.serial &+= 1
        let serial = state.pointee.serial
        state.pointee.bytes.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        state.pointee.frames.append(Frame(serial: serial, isObject: isObject, count: 0, keyBits: 0,
                                          keysStart: state.pointee.keys.count))
        state.pointee.pathKeys.append(pathKey)
        return serial
    }

    /// Closes every frame from index `depth` up.
    private func closeFrames(downTo depth: Int) {
        while state.pointee.frames.count > depth {
            let frame = state.pointee.frames.removeLast()
            state.pointee.pathKeys.removeLast()
            state.pointee.keys.truncate(to: frame.keysStart)
            state.pointee.bytes.append(frame.isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"))
        }
    }

    /// Makes the frame at `index` the innermost open one, closing those above it; gives up
    /// when it was closed already.
    @inline(__always)
    private func enter(_ index: Int, _ serial: UInt32) throws {
        let count = state.pointee.frames.count
        if count == index + 1, state.pointee.frames.base[index].serial == serial { return }
        guard index < count, state.pointee.frames.base[index].serial == serial, !state.pointee.isBroken else { throw giveUp() }
        closeFrames(downTo: index + 1)
    }

    /// Writes the comma and `key` of a member of the object at `index`; gives up on a key the
    /// object has.
    func beginMember(_ index: Int, _ serial: UInt32, key: String) throws {
        try enter(index, serial)
        if state.pointee.frames.base[index].count > 0 {
            state.pointee.bytes.append(UInt8(ascii: ","))
        }
        state.pointee.frames.base[index].count += 1
        let start = state.pointee.bytes.count
        JSONWriter.writeString(key, into: &state.pointee.bytes)
        let end = state.pointee.bytes.count
        let bit = keyBit(start: start, end: end)
        if state.pointee.frames.base[index].keyBits & bit != 0 {
            try checkNewKey(start..<end, of: index)
        }
        state.pointee.frames.base[index].keyBits |= bit
        state.pointee.keys.append(start..<end)
        state.pointee.bytes.append(UInt8(ascii: ":"))
    }

    /// A bit of 64 for the key written at `start..<end` (its quotes included): its length and
    /// its first and last characters.
    @inline(__always)
    private func keyBit(start: Int, end: Int) -> UInt64 {
        let length = end - start
        let mixed = length &* 7 &+ Int(state.pointee.bytes[start + 1]) &* 31 &+ Int(state.pointee.bytes[end - 2])
        return 1 << UInt64(mixed & 63)
    }

    private func checkNewKey(_ key: Range<Int>, of index: Int) throws {
        let keys = state.pointee.keys
        for position in state.pointee.frames.base[index].keysStart..<keys.count {
            let other = keys.base[position]
            if other.count == key.count, state.pointee.bytes[other].elementsEqual(state.pointee.bytes[key]) {
                throw giveUp() // written twice: the tree keeps the last value
            }
        }
    }

    /// Writes the comma of the next element of the array at `index`; returns its position.
    func beginElement(_ index: Int, _ serial: UInt32) throws -> Int {
        try enter(index, serial)
        let position = state.pointee.frames.base[index].count
        if position > 0 {
            state.pointee.bytes.append(UInt8(ascii: ","))
        }
        state.pointee.frames.base[index].count = position + 1
        return position
    }

    /// The elements written into the array at `index`.
    func count(_ index: Int, _ serial: UInt32) -> Int {
        guard index < state.pointee.frames.count, state.pointee.frames.base[index].serial == serial else { return 0 }
        return state.pointee.frames.base[index].count
    }

    /// The path of the frame at `index`'s value.
    func path(ofFrame index: Int) -> CodingPath {
        path(framesBelow: index + 1, then: .none)
    }

    /// Starts the single value of the value `serial`; gives up unless it is the value being
    /// encoded, with nothing written yet.
    func beginSingleValue(_ serial: UInt32) throws -> Value {
        let value = state.pointee.value
        guard value.serial == serial, !value.isWritten, state.pointee.frames.count == value.depth,
              !state.pointee.isBroken
        else { throw giveUp() }
        state.pointee.value.isWritten = true
        return value
    }

    /// Appends bytes.
    func write(_ bytes: [UInt8]) {
        state.pointee.bytes.append(contentsOf: bytes)
    }

    func write(_ text: String) {
        JSONWriter.writeString(text, into: &state.pointee.bytes)
    }

    func write<P: JSONPrimitive>(_ value: P, at path: @autoclosure () -> CodingPath) throws {
        guard value.writeJSON(into: &state.pointee.bytes) else {
            state.pointee.isBroken = true
            _ = try value.jsonValue(codingPath: path())
            throw giveUp()
        }
    }

    /// Runs `body`, a value's encoding through a container: giving up when it throws, so that
    /// an error an `encode(to:)` catches leaves no half-written member (the tree writes none).
    @inline(__always)
    func member(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch {
            state.pointee.isBroken = true
            throw error
        }
    }

    // MARK: - Encoder

    package func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (index, serial) = openValueContainer(isObject: true)
        return KeyedEncodingContainer(KeyedContainer(encoder: self, index: index, serial: serial))
    }

    package func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (index, serial) = openValueContainer(isObject: false)
        return UnkeyedContainer(encoder: self, index: index, serial: serial)
    }

    package func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self, serial: state.pointee.value.serial)
    }

    func nestedKeyed<NestedKey: CodingKey>(
        _ keyType: NestedKey.Type, pathKey: PathKey, in index: Int
    ) -> KeyedEncodingContainer<NestedKey> {
        let serial = pushFrame(isObject: true, pathKey: pathKey)
        return KeyedEncodingContainer(KeyedContainer<NestedKey>(encoder: self, index: index + 1, serial: serial))
    }

    func nestedUnkeyed(pathKey: PathKey, in index: Int) -> any UnkeyedEncodingContainer {
        let serial = pushFrame(isObject: false, pathKey: pathKey)
        return UnkeyedContainer(encoder: self, index: index + 1, serial: serial)
    }

    /// What a container hands out where it can't go on: every use of it gives up.
    func gaveUpEncoder() -> any Encoder {
        _ = giveUp()
        return self
    }
}
