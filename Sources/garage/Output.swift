import Foundation
import GarageLite

/// What the tool prints: text, tables and JSON on standard output, messages on standard error.
enum Output {
    static func line(_ text: String = "") {
        write(text, to: .standardOutput)
    }

    static func error(_ text: String) {
        write(text, to: .standardError)
    }

    /// Writes a line; when the reader went away (`garage list … | head`), ends the tool quietly,
    /// with the status a shell gives a process that SIGPIPE stopped (SIGPIPE itself is ignored:
    /// the networking library turns it off).
    private static func write(_ text: String, to handle: FileHandle) {
        do {
            try handle.write(contentsOf: Data((text + "\n").utf8))
        } catch {
            exit(141)
        }
    }

    /// `value` as pretty-printed JSON with sorted keys, dates in ISO 8601.
    static func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Output.date(date))
        }
        line(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// A date as ISO 8601, in UTC, with milliseconds.
    static func date(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: true)
            .timeSeparator(.colon).timeZone(separator: .omitted))
    }

    /// `rows` under `header`, in columns; the columns `rightAligned` names are numbers.
    static func table(_ header: [String], _ rows: [[String]], rightAligned: Set<Int> = []) {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func format(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: widths[index] - cell.count)
                return rightAligned.contains(index) ? padding + cell : cell + (index == cells.count - 1 ? "" : padding)
            }.joined(separator: "  ")
        }
        line(format(header))
        for row in rows { line(format(row)) }
    }
}
