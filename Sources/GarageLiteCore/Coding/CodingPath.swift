/// A coding path, turned into `[CodingKey]` only when asked: for an error message, or by the
/// rare `Codable` implementation that reads `codingPath`.
///
/// Appending a key makes a small value, with no allocation: the path up to the previous key
/// is shared as a node, made once per container (``node``), so a container with ten
/// properties allocates one node, not ten arrays.
package struct CodingPath: Sendable {
    /// The path without its last key.
    private let parent: CodingPathNode?
    private let last: (any CodingKey)?
    /// The number of keys.
    package let depth: Int

    package static let root = CodingPath(parent: nil, last: nil, depth: 0)

    private init(parent: CodingPathNode?, last: (any CodingKey)?, depth: Int) {
        self.parent = parent
        self.last = last
        self.depth = depth
    }

    /// This path as a shared node, to append many keys to.
    package var node: CodingPathNode? {
        guard let last else { return parent }
        return CodingPathNode(parent: parent, key: last, depth: depth)
    }

    package init(node: CodingPathNode?) {
        self.init(parent: node, last: nil, depth: node?.depth ?? 0)
    }

    /// `node`'s path and `key`.
    package init(node: CodingPathNode?, appending key: any CodingKey) {
        self.init(parent: node, last: key, depth: (node?.depth ?? 0) + 1)
    }

    package func appending(_ key: any CodingKey) -> CodingPath {
        CodingPath(node: node, appending: key)
    }

    package func appending(index: Int) -> CodingPath {
        appending(GarageCodingKey(intValue: index))
    }

    /// The keys, from the root.
    package var keys: [any CodingKey] {
        var keys: [any CodingKey] = []
        keys.reserveCapacity(depth)
        if let last { keys.append(last) }
        var current = parent
        while let node = current {
            keys.append(node.key)
            current = node.parent
        }
        return keys.reversed()
    }
}

/// A shared prefix of coding paths.
package final class CodingPathNode: Sendable {
    package let parent: CodingPathNode?
    package let key: any CodingKey
    package let depth: Int

    package init(parent: CodingPathNode?, key: any CodingKey, depth: Int) {
        self.parent = parent
        self.key = key
        self.depth = depth
    }
}

/// A coding key for array positions, `super`, and dictionary keys.
package struct GarageCodingKey: CodingKey, Sendable {
    package var stringValue: String
    package var intValue: Int?

    package init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    package init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}
