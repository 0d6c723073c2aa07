import CoreMetrics
import Foundation
import GarageLite

/// What a ``SyncServer`` counts, through swift-metrics: to the factory it was given, or the
/// process's (`MetricsSystem.bootstrap`, a Prometheus factory in `garage-server`). Labels are
/// type names, results and reasons: never an object's content, an identifier, a user or a token.
///
/// | metric | kind | dimensions |
/// |---|---|---|
/// | `garage_sync_requests_total` | counter | `route` (upload, download, live), `status` (the HTTP status) |
/// | `garage_sync_request_duration_seconds` | timer | `route` |
/// | `garage_sync_objects_uploaded_total` | counter | `type`, `result` (accepted, conflict, merged, failed) |
/// | `garage_sync_objects_downloaded_total` | counter | `type` |
/// | `garage_sync_refusals_total` | counter | `reason` (user, instance, listeners) |
/// | `garage_sync_rebases_total` | counter | `type` |
/// | `garage_sync_requests_in_progress` | gauge | |
/// | `garage_sync_listeners` | gauge | |
/// | `garage_sync_feed_lag_seconds` | recorder | (a commit's age when this instance heard of it) |
/// | `garage_sync_tombstones_purged_total` | counter | |
/// | `garage_store_connections_in_use` | gauge | (PostgreSQL: the pool's connections working now) |
/// | `garage_store_connections_open` | gauge | (PostgreSQL: the pool's open connections) |
/// | `garage_store_connections_maximum` | gauge | (PostgreSQL: the most the pool opens) |
struct SyncServerMetrics: Sendable {
    private let given: (any MetricsFactory)?

    init(given: (any MetricsFactory)?) {
        self.given = given
    }

    /// The factory given, or the process's as it is now (bootstrapped after the server was made).
    private var factory: any MetricsFactory { given ?? MetricsSystem.factory }

    func request(_ route: String, status: Int, seconds: Double) {
        Counter(label: "garage_sync_requests_total", dimensions: [("route", route), ("status", String(status))], factory: factory).increment()
        Timer(label: "garage_sync_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            .recordNanoseconds(Int64(seconds * 1_000_000_000))
    }

    func uploaded<Object>(_ typeName: String, _ results: UploadResults<Object>) {
        var counts: [String: Int] = [:]
        for result in results.results.values {
            switch result {
            case .accepted: counts["accepted", default: 0] += 1
            case .conflict: counts["conflict", default: 0] += 1
            case .merged: counts["merged", default: 0] += 1
            case .failed: counts["failed", default: 0] += 1
            }
        }
        for (result, count) in counts {
            Counter(label: "garage_sync_objects_uploaded_total", dimensions: [("type", typeName), ("result", result)], factory: factory)
                .increment(by: count)
        }
    }

    func downloaded(_ typeName: String, _ count: Int, rebase: Bool) {
        if count > 0 {
            Counter(label: "garage_sync_objects_downloaded_total", dimensions: [("type", typeName)], factory: factory).increment(by: count)
        }
        if rebase { Counter(label: "garage_sync_rebases_total", dimensions: [("type", typeName)], factory: factory).increment() }
    }

    func refused(_ reason: String) {
        Counter(label: "garage_sync_refusals_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    func inProgress(_ count: Int) {
        Gauge(label: "garage_sync_requests_in_progress", factory: factory).record(count)
    }

    /// The store's pool of connections, when it keeps one; recorded with each request's start and end.
    func pool(_ use: ConnectionPoolUse?) {
        guard let use else { return }
        Gauge(label: "garage_store_connections_in_use", factory: factory).record(use.inUse)
        Gauge(label: "garage_store_connections_open", factory: factory).record(use.open)
        Gauge(label: "garage_store_connections_maximum", factory: factory).record(use.maximum)
    }

    func listeners(_ count: Int) {
        Gauge(label: "garage_sync_listeners", factory: factory).record(count)
    }

    func feedLag(_ seconds: Double) {
        Recorder(label: "garage_sync_feed_lag_seconds", factory: factory).record(max(0, seconds))
    }

    func purged(_ count: Int) {
        if count > 0 { Counter(label: "garage_sync_tombstones_purged_total", factory: factory).increment(by: count) }
    }
}
