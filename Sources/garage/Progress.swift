import Foundation
import GarageLite

/// A progress line on standard error, for work that lasts over about a second, drawn only when
/// standard error is a terminal. `GARAGE_PROGRESS_AFTER` sets the delay in seconds (default 1).
final class Progress: Sendable {
    private struct State {
        var done = 0
        var drawn = false
        var lastDraw = Date.distantPast
        var finished = false
    }

    private let label: String
    private let total: Int?
    private let start = Date()
    private let delay: TimeInterval
    private let isShown: Bool
    private let state = Protected(State())

    /// A progress line for `label`: a bar when `total` is known, a count of seconds otherwise.
    init(_ label: String, total: Int? = nil) {
        self.label = label
        self.total = total
        self.delay = ProcessInfo.processInfo.environment["GARAGE_PROGRESS_AFTER"].flatMap(TimeInterval.init) ?? 1
        self.isShown = isatty(STDERR_FILENO) == 1
        guard isShown else { return }
        // Redraws while the work gives no news (a long transaction, a library call).
        Thread.detachNewThread { [weak self] in
            while let self, !self.state.read(\.finished) {
                self.draw()
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    /// Counts `count` more units done.
    func advance(by count: Int = 1) {
        guard isShown else { return }
        state.write { $0.done += count }
        draw()
    }

    /// Erases the line, if it was drawn.
    func finish() {
        guard isShown else { return }
        state.write { state in
            state.finished = true
            if state.drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        }
    }

    /// Runs `body`, showing the time it takes once it is over the delay.
    static func run<T>(_ label: String, _ body: () throws -> T) rethrows -> T {
        let progress = Progress(label)
        defer { progress.finish() }
        return try body()
    }

    private func draw() {
        state.write { state in
            guard !state.finished else { return }
            let now = Date()
            let elapsed = now.timeIntervalSince(start)
            guard elapsed >= delay, now.timeIntervalSince(state.lastDraw) >= 0.1 else { return }
            state.lastDraw = now
            state.drawn = true
            var text = "\r\(label) "
            if let total, total > 0 {
                let fraction = min(1, Double(state.done) / Double(total))
                let width = 30
                let filled = Int(fraction * Double(width))
                text += "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
                text += "\(Int(fraction * 100))% \(state.done)/\(total)"
            } else {
                text += String(format: "%.1f s", elapsed)
            }
            FileHandle.standardError.write(Data((text + "\u{1B}[K").utf8))
        }
    }
}
