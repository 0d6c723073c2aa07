import GarageLite

/// The small expression language of `garage list --where`, read into a ``QueryPredicate``.
///
///     expression  := term ("or" term)*
///     term        := factor ("and" factor)*
///     factor      := "not" factor | "(" expression ")" | condition
///     condition   := path ("==" | "!=" | "<" | "<=" | ">" | ">=") value
///                  | path "contains" value | path "hasPrefix" value | path "containsText" value
///                  | path "is" "null" | "status" "==" status
///     path        := key ("." key)*
///     value       := "a string" | 'a string' | number | true | false | null | word
///
/// A word that is not a number, `true`, `false` or `null` is a string: `tags contains work`.
package struct WhereExpression {
    /// Why an expression can't be read: what was expected, and where.
    package struct Problem: Error, CustomStringConvertible {
        package var description: String
    }

    private enum Token: Equatable {
        case word(String), quoted(String), symbol(String), end
    }

    private var tokens: [Token]
    private var position = 0

    /// The predicate `text` writes.
    package static func parse(_ text: String) throws -> QueryPredicate {
        var reader = WhereExpression(tokens: try tokenize(text))
        let predicate = try reader.expression()
        guard reader.peek == .end else { throw Problem(description: "unexpected \(reader.describe(reader.peek)) after a complete condition") }
        return predicate
    }

    private init(tokens: [Token]) {
        self.tokens = tokens
    }

    private static func tokenize(_ text: String) throws -> [Token] {
        var tokens: [Token] = []
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character.isWhitespace {
                index = text.index(after: index)
            } else if character == "\"" || character == "'" {
                var value = ""
                var cursor = text.index(after: index)
                while cursor < text.endIndex, text[cursor] != character {
                    if text[cursor] == "\\", text.index(after: cursor) < text.endIndex {
                        cursor = text.index(after: cursor)
                    }
                    value.append(text[cursor])
                    cursor = text.index(after: cursor)
                }
                guard cursor < text.endIndex else { throw Problem(description: "a string opened with \(character) is never closed") }
                tokens.append(.quoted(value))
                index = text.index(after: cursor)
            } else if "()".contains(character) {
                tokens.append(.symbol(String(character)))
                index = text.index(after: index)
            } else if "=!<>".contains(character) {
                var symbol = String(character)
                let next = text.index(after: index)
                if next < text.endIndex, text[next] == "=" {
                    symbol.append("=")
                    index = text.index(after: next)
                } else {
                    index = next
                }
                guard ["==", "!=", "<", "<=", ">", ">="].contains(symbol) else {
                    throw Problem(description: "unknown operator \(symbol): use ==, !=, <, <=, > or >=")
                }
                tokens.append(.symbol(symbol))
            } else {
                var word = ""
                while index < text.endIndex, !text[index].isWhitespace, !"()=!<>\"'".contains(text[index]) {
                    word.append(text[index])
                    index = text.index(after: index)
                }
                tokens.append(.word(word))
            }
        }
        return tokens + [.end]
    }

    private var peek: Token { tokens[position] }

    private mutating func next() -> Token {
        defer { position += 1 }
        return tokens[position]
    }

    private func describe(_ token: Token) -> String {
        switch token {
        case .word(let word): return "'\(word)'"
        case .quoted(let text): return "\"\(text)\""
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return "the end"
        }
    }

    private mutating func expression() throws -> QueryPredicate {
        var predicate = try term()
        while peek == .word("or") {
            position += 1
            predicate = predicate || (try term())
        }
        return predicate
    }

    private mutating func term() throws -> QueryPredicate {
        var predicate = try factor()
        while peek == .word("and") {
            position += 1
            predicate = predicate && (try factor())
        }
        return predicate
    }

    private mutating func factor() throws -> QueryPredicate {
        switch peek {
        case .word("not"):
            position += 1
            return !(try factor())
        case .symbol("("):
            position += 1
            let inner = try expression()
            guard next() == .symbol(")") else { throw Problem(description: "a '(' is never closed") }
            return inner
        default:
            return try condition()
        }
    }

    private mutating func condition() throws -> QueryPredicate {
        guard case .word(let path) = next(), !path.isEmpty else {
            throw Problem(description: "expected a property, found \(describe(tokens[position - 1]))")
        }
        let field = Field(path: path.split(separator: ".", omittingEmptySubsequences: false).map(String.init))
        let operation = next()
        if path == "status", operation == .symbol("==") {
            guard case .word(let name) = next(), let status = SyncStatus(name: name) else {
                throw Problem(description: "status == needs undetermined, notSynced, syncing or synced")
            }
            return .syncStatus(status)
        }
        switch operation {
        case .word("is"):
            guard next() == .word("null") else { throw Problem(description: "'is' is followed by null") }
            return field.isNull
        case .word("contains"): return field.contains(try value())
        case .word("hasPrefix"), .word("containsText"):
            guard case .string(let text) = try value().content else { throw Problem(description: "\(describe(operation)) takes a string") }
            return operation == .word("hasPrefix") ? field.hasPrefix(text) : field.containsText(text)
        case .symbol("=="): return field == (try value())
        case .symbol("!="): return field != (try value())
        case .symbol("<"): return field < (try value())
        case .symbol("<="): return field <= (try value())
        case .symbol(">"): return field > (try value())
        case .symbol(">="): return field >= (try value())
        default:
            throw Problem(description: "expected ==, !=, <, <=, >, >=, contains, hasPrefix, containsText or 'is null' after \(path), "
                + "found \(describe(operation))")
        }
    }

    private mutating func value() throws -> QueryValue {
        switch next() {
        case .quoted(let text): return QueryValue(text)
        case .word("true"): return true
        case .word("false"): return false
        case .word("null"): return .null
        case .word(let word):
            if let number = Double(word) { return QueryValue(number) }
            return QueryValue(word)
        case let other: throw Problem(description: "expected a value, found \(describe(other))")
        }
    }
}
