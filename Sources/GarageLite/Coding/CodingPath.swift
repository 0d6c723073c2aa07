/// A coding path, built as a linked list and turned into `[CodingKey]` only when asked.
///
/// Encoding or decoding a property appends one key; an array of keys would be copied at
/// every level, though it is read only for error messages and by the rare `Codable`
/// implementation that looks at `codingPath`.
///
/// Immutable once made; the keys it holds are the callers' own, usually enums.
final class CodingPath: @unchecked Sendable {
    static let root = CodingPath()

    private let parent: CodingPath?
    private let key: (any CodingKey)?
    /// The number of keys.
    let depth: Int

    private init() {
        parent = nil
        key = nil
        depth = 0
    }

    private init(parent: CodingPath, key: any CodingKey) {
        self.parent = parent
        self.key = key
        self.depth = parent.depth + 1
    }

    func appending(_ key: any CodingKey) -> CodingPath {
        CodingPath(parent: self, key: key)
    }

    func appending(index: Int) -> CodingPath {
        CodingPath(parent: self, key: GarageCodingKey(intValue: index))
    }

    /// The keys, from the root.
    var keys: [any CodingKey] {
        var keys: [any CodingKey] = []
        keys.reserveCapacity(depth)
        var node: CodingPath? = self
        while let current = node, let key = current.key {
            keys.append(key)
            node = current.parent
        }
        return keys.reversed()
    }

    /// The keys after appending `key`, without keeping the new node.
    func keys(appending key: any CodingKey) -> [any CodingKey] {
        keys + [key]
    }
}

/// A coding key for array positions, `super`, and dictionary keys.
struct GarageCodingKey: CodingKey, Sendable {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}
