import Foundation
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The room left on the current thread's stack, and threads with more room for deep work.
///
/// Parsing, encoding and decoding an object recurse once per level of nesting, and decoding
/// recurses once more per reference it follows: a graph deep enough (a chain of a thousand
/// references, or a value nested 500 levels deep) overflows the stack of a thread with a small
/// one — 512 KB for Foundation's secondary threads, dispatch queues and Swift concurrency on
/// Apple platforms — and a stack overflow kills the process. So where they recurse, they check
/// every few levels whether the stack is running short, and when it is, they continue on a
/// fresh thread with a large stack while the calling thread waits (see ``run(_:serving:)``).
/// Shallow objects never leave their thread.
package enum ThreadStack {
    /// Below this much room left, deep work continues on a fresh stack. It covers what can run
    /// between two checks in a debug build, whose frames are the largest: about 9 KB per
    /// reference followed and 2 KB per level of JSON nesting parsed.
    package static let reserve = 256 * 1024

    /// The stack size of the threads deep work continues on: room for about 1,500 references
    /// between two threads in a debug build, many more in a release one.
    package static let freshStackSize = 16 * 1024 * 1024

    /// Whether the current thread has less than ``reserve`` bytes of stack left. `false` when
    /// the platform does not tell where the stack ends.
    package static var isShort: Bool {
        let end = stackEnd()
        var marker: UInt8 = 0
        let here = withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
        return here < end &+ UInt(reserve)
    }

    /// Runs `body` on a new thread with a stack of ``freshStackSize`` bytes, and returns or
    /// throws what it does. The calling thread waits meanwhile; when `relay` is given, it runs
    /// the work the new thread hands back with ``Relay/perform(_:)``.
    ///
    /// The task-local state `context` captures goes along (the garage's: the store access in
    /// progress, the scopes of the `with...` and `transaction` calls), so that `body` behaves
    /// as it would have on the calling thread; a call to the garage from an `init(from:)`
    /// still throws. The app's own task-local values don't go along: Swift offers no way to
    /// copy them to a thread.
    package static func run<T>(_ body: () throws -> T, context: ThreadContext = .none, serving relay: Relay? = nil) throws -> T {
        let enter = context.capture()
        let outcome = Unchecked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        withoutActuallyEscaping(body) { body in
            let work = Unchecked<(() throws -> T)?>(body)
            let thread = Thread {
                var result: Result<T, any Error>?
                enter { result = Result { try work.value!() } }
                // `body` must not outlive this call: the thread object keeps its closure longer.
                work.value = nil
                outcome.value = result ?? .failure(GarageError.storageFailure(
                    operation: "continue on a fresh stack", reason: "the context did not run the work"))
                if let relay {
                    relay.finish()
                } else {
                    done.signal()
                }
            }
            thread.stackSize = freshStackSize
            thread.start()
            if let relay {
                relay.serve()
            } else {
                done.wait()
            }
        }
        guard let result = outcome.value else {
            throw GarageError.storageFailure(operation: "continue on a fresh stack", reason: "the thread ended without a result")
        }
        return try result.get()
    }

    /// Lets a thread that continues a database access on a fresh stack hand work that needs the
    /// database connection back to the thread that owns it, which waits in ``serve()``.
    ///
    /// GRDB allows a connection only on the thread (or dispatch queue) of its access.
    package final class Relay: @unchecked Sendable {
        private let condition = NSCondition()
        private var requests: [() -> Void] = []
        private var isFinished = false

        /// Runs `work` on the thread waiting in ``serve()``, and returns or throws what it does.
        package func perform<T>(_ work: () throws -> T) throws -> T {
            var outcome: Result<T, any Error>?
            withoutActuallyEscaping(work) { work in
                condition.lock()
                requests.append { outcome = Result { try work() } }
                condition.broadcast()
                while outcome == nil { condition.wait() }
                condition.unlock()
            }
            guard let outcome else {
                throw GarageError.storageFailure(operation: "read a row for a fresh stack", reason: "the request was not served")
            }
            return try outcome.get()
        }

        /// Runs the requests of ``perform(_:)`` as they come, until ``finish()``.
        fileprivate func serve() {
            condition.lock()
            while true {
                while requests.isEmpty && !isFinished { condition.wait() }
                if requests.isEmpty { break }
                var pending = requests
                requests.removeAll()
                condition.unlock()
                for request in pending { request() }
                // Each request holds work that must not outlive its `perform`.
                pending.removeAll()
                condition.lock()
                condition.broadcast()
            }
            condition.unlock()
        }

        fileprivate func finish() {
            condition.lock()
            isFinished = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// A value handed between two threads that never use it at the same time: the waiting
    /// thread reads it only after the other one has signalled.
    private final class Unchecked<Value>: @unchecked Sendable {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    // MARK: - Where the stack ends

    /// Each thread's lowest usable stack address, found once per thread: asking the system can
    /// cost a read of `/proc/self/maps` (the main thread on Linux).
    private static let stackEndKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// The lowest address of the current thread's stack (stacks grow down on every platform
    /// Swift runs on), or 0 when unknown.
    private static func stackEnd() -> UInt {
        if let stored = pthread_getspecific(stackEndKey) {
            return UInt(bitPattern: stored) &- 1
        }
        let end = systemStackEnd()
        // Stored plus one, so that an unknown end (0) is remembered too.
        pthread_setspecific(stackEndKey, UnsafeRawPointer(bitPattern: end &+ 1))
        return end
    }

    #if canImport(Glibc) || canImport(Musl)
    /// `pthread_getattr_np`, a GNU extension the Swift module of the C library does not show.
    private static let pthreadGetAttributes: (@convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "pthread_getattr_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafeMutablePointer<pthread_attr_t>) -> Int32).self)
    }()
    #endif

    private static func systemStackEnd() -> UInt {
        #if canImport(Darwin)
        let thread = pthread_self()
        let top = UInt(bitPattern: pthread_get_stackaddr_np(thread))
        return top &- UInt(pthread_get_stacksize_np(thread))
        #elseif canImport(Glibc) || canImport(Musl)
        guard let getAttributes = pthreadGetAttributes else { return 0 }
        var attributes = pthread_attr_t()
        guard getAttributes(pthread_self(), &attributes) == 0 else { return 0 }
        defer { pthread_attr_destroy(&attributes) }
        var address: UnsafeMutableRawPointer?
        var size = 0
        guard pthread_attr_getstack(&attributes, &address, &size) == 0, let address else { return 0 }
        return UInt(bitPattern: address)
        #else
        return 0
        #endif
    }
}

/// The task-local values a thread that continues deep work must see: `capture` reads
/// them on the calling thread, and returns what sets them again around a body.
package struct ThreadContext: Sendable {
    package let capture: @Sendable () -> @Sendable (() -> Void) -> Void

    /// No task-local state: work that calls no user code (parsing JSON).
    package static let none = ThreadContext { { body in body() } }

    /// Makes one of the given values, each stored as given.
    package init(capture: @escaping @Sendable () -> @Sendable (() -> Void) -> Void) {
        self.capture = capture
    }
}
