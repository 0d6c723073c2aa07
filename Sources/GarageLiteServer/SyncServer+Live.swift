import Foundation
import GarageLite

// Live changes: the news that a scope's feed moved, for the devices that read it, from any
// instance. Every upload that writes moves its scopes' counters (`ScopeCounter`, one row per
// scope), in its commit; the server observes those rows through its garage, which hears the
// commits of the other instances on the same store too (PostgreSQL: LISTEN/NOTIFY; SQLite: the
// file's commit counter). The feed's cursor stays the truth: a device downloads after its
// cursor when it hears, and once when it connects, so a lost news misses nothing.
extension SyncServer {
    /// The news that a feed `access` reads moved: the stream yields once per commit (or burst
    /// of commits) that moved one, until the caller stops iterating. For a transport's live
    /// route (``addRoutes(to:path:maximumBodySize:authenticate:)`` serves it as server-sent events).
    ///
    /// ```swift
    /// for await _ in server.feedMoves(access: access) { try await send("event: moved\n\n") }
    /// ```
    public func feedMoves(access: SyncAccess) -> AsyncStream<Void> {
        live.subscribe(scopes: access.scopes, garage: garage)
    }

    /// How many devices listen to this instance now.
    public var listeners: Int { live.count }
}

/// The devices listening to one server, and the watch of its scopes' counters they share,
/// which runs while one listens.
final class LiveFeeds: Sendable {
    private struct Listener {
        var scopes: Set<String>
        var continuation: AsyncStream<Void>.Continuation
    }

    private struct State {
        var listeners: [UUID: Listener] = [:]
        var watch: Task<Void, Never>?
    }

    private let state = Protected(State())
    private let metrics: SyncServerMetrics

    init(metrics: SyncServerMetrics) {
        self.metrics = metrics
    }

    var count: Int { state.read { $0.listeners.count } }

    func subscribe(scopes: Set<String>, garage: Garage) -> AsyncStream<Void> {
        // The newest news only: a device that reads late downloads once for all of it.
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        state.write { state in
            state.listeners[id] = Listener(scopes: scopes, continuation: continuation)
            if state.watch == nil { state.watch = Self.watching(garage, self, metrics) }
            metrics.listeners(state.listeners.count)
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        let watch = state.write { state -> Task<Void, Never>? in
            state.listeners[id] = nil
            metrics.listeners(state.listeners.count)
            guard state.listeners.isEmpty else { return nil }
            defer { state.watch = nil }
            return state.watch
        }
        watch?.cancel()
    }

    /// Tells the listeners of `scopes` (`nil`: of every scope) that their feeds moved.
    func moved(_ scopes: Set<String>?) {
        state.read { state in
            for listener in state.listeners.values where scopes.map({ !listener.scopes.isDisjoint(with: $0) }) ?? true {
                listener.continuation.yield()
            }
        }
    }

    private static func watching(_ garage: Garage, _ feeds: LiveFeeds, _ metrics: SyncServerMetrics) -> Task<Void, Never> {
        let changes = garage.changes(of: ScopeCounter.self)
        return Task { [weak feeds] in
            for await batch in changes {
                guard let feeds else { return }
                // How long the commits took to be heard here (another instance's: through the store).
                let heard = Date().timeIntervalSince1970
                if let counters = try? await garage.retrieve(ScopeCounter.self, identifiers: batch.compactMap(\.identifier)) {
                    for case let movedAt? in counters.map({ $0?.movedAt }) { metrics.feedLag(heard - movedAt) }
                }
                // A change without an identifier is one of the whole type (a deleteAll).
                let scopes = batch.map(\.identifier)
                feeds.moved(scopes.contains(nil) ? nil : Set(scopes.compactMap { $0 }))
            }
        }
    }

    deinit {
        state.read { $0.watch }?.cancel()
    }
}
