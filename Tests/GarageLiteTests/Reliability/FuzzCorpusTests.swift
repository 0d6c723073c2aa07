import Foundation
import Testing

// The fuzzers' inputs, replayed on every run: each target's committed corpus (Fuzz/corpus) and
// every finding kept as a regression (Fuzz/regressions) go through the target as libFuzzer
// would give them (`garage-fuzz TARGET PATH...`, built with the tests). A crash fails the test;
// Fuzz/README.md says how to fuzz, and how a finding becomes one of these inputs.
@Suite(.firstPassOnly) struct FuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test(arguments: ["records", "row", "garagestorage", "where", "importline", "query"])
    func everyCorpusInputAndFindingReplaysWithoutACrash(target: String) throws {
        let executable = try #require(ToolProcess.builtExecutable(named: "garage-fuzz"), "garage-fuzz is built with the tests")
        let corpus = Self.root.appendingPathComponent("Fuzz/corpus/\(target)").path
        let regressions = Self.root.appendingPathComponent("Fuzz/regressions/\(target)").path
        let inputs = try FileManager.default.contentsOfDirectory(atPath: corpus).count
        try #require(inputs > 0, "no corpus for \(target) in \(corpus)")
        let result = try ToolProcess.run(executable: executable, [target, corpus, regressions], timeout: 300)
        #expect(result.exitCode == 0, "\(result)")
        #expect(String(decoding: result.stdoutData, as: UTF8.self).contains("none crashed"), "\(result)")
    }
}
