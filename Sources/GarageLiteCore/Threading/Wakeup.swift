import Foundation

/// A pause that ends early when someone calls ``wake()``: the loop of a watch that looks at an
/// interval, and at once when it hears of something to look at.
///
/// A wake while nobody waits is kept: the next ``wait(nanoseconds:)`` returns at once. Several
/// wakes before a wait make one.
package final class Wakeup: Sendable {
    /// Makes one, in its initial state.
    package init() {}

    private struct State {
        var isPending = false
        var waiter: CheckedContinuation<Void, Never>?
        /// Which wait the pending timer belongs to: a timer never ends a later wait.
        var generation = 0
    }
    private let state = Protected(State())

    /// Ends the current wait, or the next one.
    package func wake() {
        let waiter = state.write { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.isPending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns after `nanoseconds`, or sooner when woken (or woken since the last wait).
    package func wait(nanoseconds: UInt64) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let generation = state.write { state -> Int? in
                if state.isPending {
                    state.isPending = false
                    return nil
                }
                state.generation += 1
                state.waiter = continuation
                return state.generation
            }
            guard let generation else { return continuation.resume() }
            Task { [state] in
                try? await Task.sleep(nanoseconds: nanoseconds)
                let waiter = state.write { state -> CheckedContinuation<Void, Never>? in
                    guard state.generation == generation, let waiter = state.waiter else { return nil }
                    state.waiter = nil
                    return waiter
                }
                waiter?.resume()
            }
        }
    }
}
