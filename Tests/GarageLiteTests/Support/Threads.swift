import Foundation

/// Holds a value written by another thread; the semaphore that signals it orders the accesses.
final class ThreadResult<T>: @unchecked Sendable {
    var value: T?
}

/// Runs `body` on a new thread and waits for its result: unlike `DispatchQueue.sync`,
/// which may run its block on the calling thread, this is always another thread.
func onAnotherThread<T>(_ body: @escaping @Sendable () -> T) -> T {
    let result = ThreadResult<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        result.value = body()
        done.signal()
    }
    thread.start()
    done.wait()
    return result.value!
}
