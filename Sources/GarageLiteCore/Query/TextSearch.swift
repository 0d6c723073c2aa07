import Foundation

/// Text search as the rule answers it: the words of an object's indexed text, and whether a
/// search's words are among them. Engines answer with their own full-text indexes (SQLite's
/// FTS5 with its `unicode61` tokenizer, PostgreSQL's `tsvector` of the `simple` configuration),
/// which split text the same way for words of letters and digits between spaces and
/// punctuation; `QueryTextTests` holds them to this.
package enum TextSearch {
    /// One word a search looks for: the word itself, or (`isPrefix`, written `word*`) any word
    /// that starts with it.
    package struct Term: Sendable, Hashable {
        package var word: String
        package var isPrefix: Bool
    }

    /// The words of `text`: runs of letters and digits, lowercased.
    package static func words(_ text: String) -> [String] {
        var words: [String] = [], current = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .decimalNumber, .letterNumber, .otherNumber, .privateUse:
                current.unicodeScalars.append(scalar)
            default:
                if !current.isEmpty { words.append(current.lowercased()) }
                current = ""
            }
        }
        if !current.isEmpty { words.append(current.lowercased()) }
        return words
    }

    /// The terms of a search: its words, each a prefix when a `*` follows it.
    package static func terms(_ search: String) -> [Term] {
        var terms: [Term] = []
        for piece in search.split(whereSeparator: \.isWhitespace) {
            let pieceWords = words(String(piece))
            for (index, word) in pieceWords.enumerated() {
                terms.append(Term(word: word, isPrefix: index == pieceWords.count - 1 && piece.hasSuffix("*")))
            }
        }
        return terms
    }

    /// The text an object's indexed fields hold: their strings, and the strings of their
    /// arrays, in the index's order, a space between each.
    package static func text(_ json: JSONValue, _ fields: [Field]) -> String {
        var pieces: [String] = []
        for field in fields {
            switch RowQuery.lookup(field, in: json) {
            case .string(let text)?: pieces.append(text)
            case .array(let elements)?:
                for case .string(let text) in elements { pieces.append(text) }
            default: break
            }
        }
        return pieces.joined(separator: " ")
    }

    /// How many of the words of `text` the terms find, or `nil` when one term finds none
    /// (the object doesn't match).
    package static func hits(_ terms: [Term], in text: String) -> Int? {
        guard !terms.isEmpty else { return nil }       // a search without words finds nothing
        let words = words(text)
        var hits = 0
        for term in terms {
            let found = words.filter { term.isPrefix ? $0.hasPrefix(term.word) : $0 == term.word }.count
            if found == 0 { return nil }
            hits += found
        }
        return hits
    }
}
