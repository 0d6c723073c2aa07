import Foundation
import Testing

/// Runs a test (each test of a suite) on threads of its own, outside Swift's cooperative pool.
///
/// Swift Testing starts every test at once on the pool, which has as many threads as cores
/// (2 in CI), and runs a synchronous test as one job from its first line to its last. A test
/// that waits on that thread (for child processes, a busy timeout, its own threads, a sleep)
/// holds one of the two for the whole wait, and every `async` test behind it waits too: an
/// engine's `run()` that needs a dozen database round trips for its first sync took minutes.
/// With this trait, the waiting happens on a thread of the test's own.
struct OwnThreads: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        // Task executors came with macOS 15 and its peers: before them, the pool runs it.
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
            try await withTaskExecutorPreference(ThreadPerJob.shared) { try await function() }
        } else {
            try await function()
        }
    }
}

extension Trait where Self == OwnThreads {
    /// Runs the test (each test of the suite) outside the cooperative pool: see ``OwnThreads``.
    static var ownThreads: OwnThreads { OwnThreads() }
}

/// An executor that runs each job on a new thread: a synchronous test is one job, and its
/// waits block no thread of the cooperative pool.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
final class ThreadPerJob: TaskExecutor {
    static let shared = ThreadPerJob()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        // The stack of a test's thread, as the pool's: deep graphs are tested on it.
        thread.stackSize = 8 << 20
        thread.start()
    }
}
