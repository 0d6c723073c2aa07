import Foundation

/// A value guarded by a lock, so that many threads may read and change it.
///
/// `Garage` keeps all its mutable state (configuration, unsaved changes) in one
/// `Protected` value: every access goes through ``read(_:)`` or ``write(_:)``. The package's
/// other targets (the `garage` tool) use it too, so its access is `package`.
package final class Protected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    package func read<T>(_ body: (Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(value)
    }

    package func write<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
