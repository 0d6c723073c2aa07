import Foundation

// Deep graphs on small stacks: decoding recurses once per reference and per level of nesting,
// so when the stack runs short (see `ThreadStack`), it continues on a thread with a large one.
extension GraphDecoder {
    /// Runs `body` on a fresh stack. The rows it looks up are read on this thread, which owns
    /// the database connection, and waits for them.
    package func onFreshStack<T>(_ body: () throws -> T) throws -> T {
        if relay != nil {
            // Already on a fresh stack: row lookups already go to the connection's thread.
            return try ThreadStack.run(body, context: context)
        }
        let relay = ThreadStack.Relay()
        self.relay = relay
        defer { self.relay = nil }
        return try ThreadStack.run(body, context: context, serving: relay)
    }

    /// The row `key`, read on the thread that owns the database connection.
    package func lookUpRow(_ key: ObjectKey) throws -> DecodableRow? {
        guard let relay else { return try rowLookup(key) }
        return try relay.perform { try rowLookup(key) }
    }
}
