import Foundation

// What the text rows must answer, from the generator (not from any implementation): the notes
// that hold the rare word, and the most relevant notes for two words by SQLite FTS5's BM25,
// computed here as fts5_aux.c computes it, over the text every implementation indexes (a
// note's title, a space, its body) split as FTS5's `unicode61` tokenizer splits it.

struct TextExpectations {
    /// The word of the filter row: in about 0.3 % of the notes (`BenchData.rareBodyWords`).
    static let rareWord = BenchData.rarestWord
    /// The words of the ranked search: a rarer word (about 4.5 % of the notes) and a common
    /// one (about 43 %).
    static let twoWords = "invoice dentist"

    var storeSize: Int
    var notebooks: Int
    /// The notes that hold `rareWord`, in identifier order.
    var withRareWord: [BenchNote]
    /// How many notes hold both of `twoWords`.
    var twoWordMatches: Int
    /// The `pageSize` notes most relevant to `twoWords`: by BM25, ties in identifier order.
    var mostRelevant: [BenchNote]
    /// Their BM25 scores (positive: FTS5's `bm25()` negated, more is better).
    var mostRelevantScores: [Double]
    /// How many of the matches tie with the last of `mostRelevant` (its score exactly).
    var tiesAtTheEnd: Int
    /// The smallest gap between two different scores among the first `pageSize + 1` matches,
    /// relative to the score: SQLite's order and this one agree while it is far above the
    /// rounding of a double (1e-16).
    var smallestGap: Double

    /// The text every implementation indexes for `note`.
    static func indexedText(_ note: BenchNote) -> String {
        note.title + " " + note.body
    }

    /// The words of `text` as FTS5's `unicode61` tokenizer finds them in ASCII text (the
    /// generator's): runs of letters and digits, lowercased.
    static func words(_ text: String) -> [String] {
        var words: [String] = [], word: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): word.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): word.append(byte + 32)
            default:
                precondition(byte < 0x80, "the notes' text is ASCII")
                if !word.isEmpty { words.append(String(decoding: word, as: UTF8.self)) }
                word.removeAll(keepingCapacity: true)
            }
        }
        if !word.isEmpty { words.append(String(decoding: word, as: UTF8.self)) }
        return words
    }

    static func holdsRareWord(_ note: BenchNote) -> Bool {
        words(indexedText(note)).contains(rareWord)
    }

    init(storeSize n: Int, notebooks: Int, pageSize: Int) {
        storeSize = n
        self.notebooks = notebooks
        let terms = Self.words(Self.twoWords)
        let rare = Self.rareWord
        var withRareWord: [BenchNote] = []
        var totalTokens = 0
        var hits = [Int](repeating: 0, count: terms.count)
        var matches: [(index: Int, size: Int, frequencies: [Int])] = []
        for index in 0..<n {
            let note = BenchData.note(index, notebooks: notebooks)
            let words = Self.words(Self.indexedText(note))
            totalTokens += words.count
            if words.contains(rare) { withRareWord.append(note) }
            let frequencies = terms.map { term in words.lazy.filter { $0 == term }.count }
            for (term, frequency) in frequencies.enumerated() where frequency > 0 { hits[term] += 1 }
            if frequencies.allSatisfy({ $0 > 0 }) { matches.append((index, words.count, frequencies)) }
        }
        self.withRareWord = withRareWord
        twoWordMatches = matches.count

        // fts5Bm25GetData and fts5Bm25Function, in the same order of operations.
        let k1 = 1.2, b = 0.75
        let avgdl = Double(totalTokens) / Double(n)
        let idf = hits.map { hit -> Double in
            let idf = log((Double(n - hit) + 0.5) / (Double(hit) + 0.5))
            return idf <= 0 ? 1e-6 : idf
        }
        func score(size: Int, frequencies: [Int]) -> Double {
            let d = Double(size)
            var score = 0.0
            for (term, frequency) in frequencies.enumerated() {
                let f = Double(frequency)
                score += idf[term] * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * d / avgdl)))
            }
            return score
        }
        let ranked = matches.map { (index: $0.index, score: score(size: $0.size, frequencies: $0.frequencies)) }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.index < $1.index }
        let page = ranked.prefix(pageSize)
        mostRelevant = page.map { BenchData.note($0.index, notebooks: notebooks) }
        mostRelevantScores = page.map(\.score)
        tiesAtTheEnd = page.last.map { last in ranked.filter { $0.score == last.score }.count } ?? 0
        var gap = Double.infinity
        for (a, b) in zip(ranked.prefix(pageSize + 1), ranked.prefix(pageSize + 1).dropFirst()) where a.score != b.score {
            gap = min(gap, (a.score - b.score) / a.score)
        }
        smallestGap = gap
    }

    /// The scores of the most relevant, for the progress line.
    var relevanceSummary: String {
        guard let first = mostRelevantScores.first, let last = mostRelevantScores.last else { return "none" }
        return String(format: "BM25 %.4f to %.4f, %d distinct scores, %d matches tie with the last (%d of them in the page), "
                      + "smallest relative gap between scores %.1e",
                      first, last, Set(mostRelevantScores).count, tiesAtTheEnd,
                      mostRelevantScores.filter { $0 == last }.count, smallestGap)
    }

    /// The expectations of each text store size, computed once.
    final class Cache {
        private var computed: [Int: TextExpectations] = [:]

        func get(storeSize n: Int, notebooks: Int, pageSize: Int) -> TextExpectations {
            if let text = computed[n] { return text }
            let text = TextExpectations(storeSize: n, notebooks: notebooks, pageSize: pageSize)
            computed[n] = text
            return text
        }
    }
}
