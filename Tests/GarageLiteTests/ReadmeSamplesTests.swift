import Foundation
import Testing

/// The README is a front door (issue 25): short, and every Swift sample in it a verbatim slice of
/// a snippet under `Snippets/`, which `swift build` compiles. A sample edited in the README alone,
/// or a snippet changed without its README slice, fails here.
@Suite(.firstPassOnly) struct ReadmeSamplesTests {
    /// The repository's root, found from this file's path (`Tests/GarageLiteTests/…`).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    static let maximumReadmeLines = 450

    /// Each line without its trailing whitespace.
    static func trimmingTrailingWhitespace(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in String(line[..<(line.lastIndex { !$0.isWhitespace }.map(line.index(after:)) ?? line.startIndex)]) }
            .joined(separator: "\n")
    }

    /// The ```swift blocks of a Markdown text, each without its fences (and without the fence's
    /// indentation, for a block inside a list item).
    static func swiftBlocks(of markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        var indentation = 0
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if current == nil {
                if trimmed.hasPrefix("```swift") {
                    current = []
                    indentation = line.count - trimmed.count
                }
            } else if trimmed.hasPrefix("```") {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                let spaces = line.prefix { $0 == " " }.count
                current!.append(line.dropFirst(min(spaces, indentation)))
            }
        }
        return blocks
    }

    static func readme() throws -> String {
        try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    }

    /// The text of every Swift file under `Snippets/`, by its path below the root.
    static func snippets() throws -> [(path: String, text: String)] {
        let folder = root.appendingPathComponent("Snippets")
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        var files: [(path: String, text: String)] = []
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            files.append(("Snippets/" + url.path.dropFirst(folder.path.count + 1), trimmingTrailingWhitespace(text)))
        }
        return files.sorted { $0.path < $1.path }
    }

    @Test func everySwiftSampleOfTheReadmeIsInASnippet() throws {
        let snippets = try Self.snippets()
        #expect(!snippets.isEmpty, "no Swift file under \(Self.root.path)/Snippets")
        let blocks = Self.swiftBlocks(of: try Self.readme())
        #expect(!blocks.isEmpty, "README.md has no ```swift block")
        for block in blocks {
            let sample = Self.trimmingTrailingWhitespace(block)
            let firstLine = sample.split(separator: "\n").first.map(String.init) ?? ""
            #expect(
                snippets.contains { $0.text.contains(sample) },
                "The README's Swift sample that starts with `\(firstLine)` is in no file under Snippets/: edit the snippet, and copy its lines into the README verbatim"
            )
        }
    }

    @Test func theReadmeIsShort() throws {
        let lines = try Self.readme().split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= Self.maximumReadmeLines, "README.md has \(lines) lines, more than \(Self.maximumReadmeLines): move the depth into a DocC article")
    }

    /// The demo's devices sync through the library's ready transport (`HTTPSyncTransport`: no
    /// transport of its own over HTTP); the hand-written transport the README and the DocC article
    /// show (`Snippets/SyncEngine.swift`) fits in the 30 lines of code the README promises.
    @Test func theDemoUsesTheReadyTransportAndTheSnippetsFitsIn30Lines() throws {
        let demo = try String(contentsOf: Self.root.appendingPathComponent("Sources/garage-demo/main.swift"), encoding: .utf8)
        #expect(demo.contains("HTTPSyncTransport(servers:"))
        let snippet = try #require(try Self.snippets().first { $0.path == "Snippets/SyncEngine.swift" })
        let lines = snippet.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("struct NotesTransport: SyncTransport") })
        let end = try #require(lines[start...].firstIndex { $0 == "}" })
        let code = lines[start...end].map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty && !$0.hasPrefix("//") && !$0.hasPrefix("import ") && !$0.hasPrefix("#")
        }
        #expect(code.count <= 30, "the transport is \(code.count) lines of code, more than the 30 the README promises")
    }
}
