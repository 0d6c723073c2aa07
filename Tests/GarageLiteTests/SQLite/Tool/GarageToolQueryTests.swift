import Foundation
import GarageLite
import Testing

/// Issue 28: `garage list --where … --sort …` answers a query of one type's records.
extension GarageToolTests {
    @Test func listWhereAndSortQueryOneType() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)

        let counted = try garage("list", path, "--type", "GTItem", "--where", "count >= 2 and not (name == Charlie)", "--json")
        #expect(counted.exitCode == 0, "\(counted)")
        #expect(try listedKeys(counted) == ["GTItem(b)"], "the tombstone d is no object")

        let sorted = try garage("list", path, "--type", "GTItem", "--where", "name hasPrefix 'A' or count > 2", "--sort", "count:desc",
                                "--json")
        #expect(try listedKeys(sorted) == ["GTItem(c)", "GTItem(a)"])

        let withStatus = try garage("list", path, "--type", "GTItem", "--where", "status == synced or name containsText alpha",
                                    "--sort", "name", "--json")
        #expect(try listedKeys(withStatus) == ["GTItem(a)", "GTItem(b)"])
        let limited = try garage("list", path, "--type", "GTItem", "--sort", "name:desc", "--limit", "1", "--json")
        #expect(try listedKeys(limited) == ["GTItem(c)"])

        // Mistakes are usage errors that say what is wrong.
        let noType = try garage("list", path, "--where", "count > 1")
        #expect(noType.exitCode == 64 && noType.stderr.contains("--type"), "\(noType)")
        let unclosed = try garage("list", path, "--type", "GTItem", "--where", "(count > 1")
        #expect(unclosed.exitCode == 64 && unclosed.stderr.contains("never closed"), "\(unclosed)")
        let misspelled = try garage("list", path, "--type", "GTItem", "--where", "nmae == Alpha", "--sort", "cuont", "--json")
        #expect(try misspelled.exitCode == 0 && listedKeys(misspelled).isEmpty, "\(misspelled)")
        #expect(misspelled.stderr.contains("no GTItem object holds a property nmae"), "\(misspelled)")
        #expect(misspelled.stderr.contains("no GTItem object holds a property cuont"), "\(misspelled)")
        #expect(!withStatus.stderr.contains("warning"), "\(withStatus)")
        let badOperator = try garage("list", path, "--type", "GTItem", "--where", "count => 1")
        #expect(badOperator.exitCode == 64 && badOperator.stderr.contains("unknown operator"), "\(badOperator)")
    }

    @Test func statsListsTheQueryIndexes() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)
        try Garage(path: path).index(GTItem.self, on: Field("name"))
        let text = try garage("stats", path)
        #expect(text.exitCode == 0 && text.stdout.contains("Indexes:    GTItem(name)"), "\(text)")
        let json = try garage("stats", path, "--json")
        #expect((try self.json(json) as? [String: Any])?["indexes"] as? [String] == ["GTItem(name)"], "\(json)")
    }

    @Test func listSearchFindsWordsOfTheTextIndex() throws {
        let directory = try TemporaryDirectory()
        let path = try makeStore(in: directory)
        let missing = try garage("list", path, "--type", "GTItem", "--search", "alpha")
        #expect(missing.exitCode != 0 && missing.stderr.contains("no text index"), "\(missing)")
        try Garage(path: path).textIndex(GTItem.self, on: Field("name"))
        let found = try garage("list", path, "--type", "GTItem", "--search", "ALPHA", "--json")
        #expect(try listedKeys(found) == ["GTItem(a)"], "\(found)")
        let prefixed = try garage("list", path, "--type", "GTItem", "--search", "cha*", "--where", "count > 1", "--json")
        #expect(try listedKeys(prefixed) == ["GTItem(c)"], "\(prefixed)")
        let stats = try garage("stats", path)
        #expect(stats.stdout.contains("GTItem(name) text"), "\(stats)")
        let noType = try garage("list", path, "--search", "alpha")
        #expect(noType.exitCode == 64 && noType.stderr.contains("--type"), "\(noType)")
    }
}
