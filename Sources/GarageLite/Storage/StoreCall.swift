import Foundation
import GarageLiteCore
import GarageLiteSQLite

/// One public operation, described once: the accesses to the store it makes (``StoreWork``s,
/// and the batches of a streaming write), and what it does between them on the calling
/// thread. ``Store/run(_:)-(StoreCall<Result>)`` runs it on the calling thread, and
/// ``Store/run(_:)-(StoreCall<Result>)async`` without blocking it: the same description, so
/// that the synchronous and `async` forms of an operation can't drift apart.
///
/// A call is written as the steps of a sequence, each deciding the next:
///
/// ```swift
/// StoreCall(store.readingMetadata(name)) { text in          // an access, then what follows
///     let new = try decide(text)                            // on the calling thread
///     return StoreCall(store.replacingMetadata(name, with: new)) { _ in .done(new) }
/// }
/// ```
///
/// A loop is a function that returns its next step (see `Garage.rewriting(encrypted:_:)`);
/// the runner calls the steps one after the other, so a long loop takes no stack. The
/// `async` runner checks for cancellation before each write and before it commits (see
/// ``Store/run(_:)-(StoreWork<T>)async``): a cancelled call stops between two writes, where
/// the store is consistent, and throws `CancellationError`.
///
/// The steps are not `Sendable`: they run on the caller's thread or task, and may hold its
/// non-`Sendable` values (the objects being parked).
struct StoreCall<Result> {
    fileprivate enum Step {
        case done(Result)
        case failed(any Error)
        case access(any StoreAccess<Result>)
    }

    fileprivate let step: Step

    fileprivate init(step: Step) {
        self.step = step
    }

    /// A call that makes no access and returns `result`.
    static func done(_ result: Result) -> StoreCall {
        StoreCall(step: .done(result))
    }

    /// A call that makes no access and throws `error`.
    static func failed(_ error: any Error) -> StoreCall {
        StoreCall(step: .failed(error))
    }

    /// Runs `work`, then the call `next` makes of its result.
    init<Value>(_ work: StoreWork<Value>, then next: @escaping (Value) throws -> StoreCall) {
        self.init(step: .access(WorkThen(work: work, next: next)))
    }

    /// Runs `work`, and returns its result.
    init(_ work: StoreWork<Result>) {
        self.init(work) { .done($0) }
    }

    /// The call `body` makes, now; an error it throws becomes the call's (so that
    /// ``catching(_:)`` sees it).
    static func starting(_ body: () throws -> StoreCall) -> StoreCall {
        do {
            return try body()
        } catch {
            return .failed(error)
        }
    }

    /// Makes this call, then the call `next` makes of its result.
    func then<Next>(_ next: @escaping (Result) throws -> StoreCall<Next>) -> StoreCall<Next> {
        switch step {
        case .done(let result): return .starting { try next(result) }
        case .failed(let error): return .failed(error)
        case .access(let access): return StoreCall<Next>(step: .access(Continued(first: access, next: next)))
        }
    }

    /// Makes this call, and returns `transform` of its result.
    func map<Next>(_ transform: @escaping (Result) throws -> Next) -> StoreCall<Next> {
        then { .done(try transform($0)) }
    }

    /// Makes this call; when it throws, makes the call `recover` makes of the error instead
    /// (which may throw it, or another).
    func catching(_ recover: @escaping (any Error) throws -> StoreCall) -> StoreCall {
        switch step {
        case .done: return self
        case .failed(let error): return .starting { try recover(error) }
        case .access(let access): return StoreCall(step: .access(Caught(first: access, recover: recover)))
        }
    }

    /// Makes this call, then runs `body` whether it returned or threw.
    func always(_ body: @escaping () -> Void) -> StoreCall {
        map { result in
            body()
            return result
        }.catching { error in
            body()
            throw error
        }
    }
}

// MARK: - Running

extension Store {
    /// Makes `call` on this thread.
    func run<Result>(_ call: StoreCall<Result>) throws -> Result {
        var call = call
        while case .access(let access) = call.step { call = access.resume(in: self) }
        return try call.result()
    }

    /// Makes `call` without blocking the calling thread; it stops with `CancellationError`
    /// before a write when its task is cancelled (see ``run(_:)-(StoreWork<T>)async``).
    nonisolated(nonsending) func run<Result>(_ call: StoreCall<Result>) async throws -> Result {
        var call = call
        while case .access(let access) = call.step { call = await access.resume(in: self) }
        return try call.result()
    }
}

extension StoreCall {
    /// The result of a call that made its last access.
    fileprivate func result() throws -> Result {
        switch step {
        case .done(let result): return result
        case .failed(let error): throw error
        case .access: preconditionFailure("a call with an access left has no result yet")
        }
    }
}

// MARK: - Accesses

/// One access of a ``StoreCall`` and what follows it. Its two `resume` methods are the only
/// place where the two runners differ: a `try` or a `try await`.
protocol StoreAccess<Result> {
    associatedtype Result
    /// Makes the access on this thread; returns the call that follows (a failed one for an error).
    func resume(in store: Store) -> StoreCall<Result>
    /// Makes the access without blocking the calling thread; returns the call that follows.
    nonisolated(nonsending) func resume(in store: Store) async -> StoreCall<Result>
}

/// A ``StoreWork``, then what follows of its result.
private struct WorkThen<Value, Result>: StoreAccess {
    let work: StoreWork<Value>
    let next: (Value) throws -> StoreCall<Result>

    func resume(in store: Store) -> StoreCall<Result> {
        let value: Value
        do { value = try store.run(work) } catch { return .failed(error) }
        return .starting { try next(value) }
    }

    nonisolated(nonsending) func resume(in store: Store) async -> StoreCall<Result> {
        let value: Value
        do { value = try await store.run(work) } catch { return .failed(error) }
        return .starting { try next(value) }
    }
}

/// An access whose call continues with `next`.
private struct Continued<Middle, Result>: StoreAccess {
    let first: any StoreAccess<Middle>
    let next: (Middle) throws -> StoreCall<Result>

    func resume(in store: Store) -> StoreCall<Result> {
        first.resume(in: store).then(next)
    }

    nonisolated(nonsending) func resume(in store: Store) async -> StoreCall<Result> {
        await first.resume(in: store).then(next)
    }
}

/// An access whose call recovers from its errors with `recover`.
private struct Caught<Result>: StoreAccess {
    let first: any StoreAccess<Result>
    let recover: (any Error) throws -> StoreCall<Result>

    func resume(in store: Store) -> StoreCall<Result> {
        first.resume(in: store).catching(recover)
    }

    nonisolated(nonsending) func resume(in store: Store) async -> StoreCall<Result> {
        await first.resume(in: store).catching(recover)
    }
}

/// An access made by a closure of the caller (a batch handed to a streaming write): `run`
/// on this thread, `runAsync` without blocking it.
struct CustomAccess<Value, Result>: StoreAccess {
    let run: () throws -> Value
    let runAsync: nonisolated(nonsending) () async throws -> Value
    let next: (Value) throws -> StoreCall<Result>

    func resume(in store: Store) -> StoreCall<Result> {
        let value: Value
        do { value = try run() } catch { return .failed(error) }
        return .starting { try next(value) }
    }

    nonisolated(nonsending) func resume(in store: Store) async -> StoreCall<Result> {
        let value: Value
        do { value = try await runAsync() } catch { return .failed(error) }
        return .starting { try next(value) }
    }
}

extension StoreCall {
    /// Makes an access of the caller's own (see ``CustomAccess``), then the call `next` makes
    /// of its result.
    init<Value>(
        run: @escaping () throws -> Value, runAsync: nonisolated(nonsending) @escaping () async throws -> Value,
        then next: @escaping (Value) throws -> StoreCall
    ) {
        self.init(step: .access(CustomAccess(run: run, runAsync: runAsync, next: next)))
    }
}
