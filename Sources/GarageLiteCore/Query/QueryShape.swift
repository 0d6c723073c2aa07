import Foundation

/// What a type's JSON can hold, as its `Decodable` conformance asks for it: each coding key
/// and the kind of its value. A query is checked against it at its first use, so that a
/// misspelled property or a comparison with a value of the wrong kind is an error, not an
/// empty result.
///
/// It is learnt by decoding the type from a decoder that answers every request with a
/// placeholder and writes down what was asked (``ShapeDecoder``). A conformance that refuses
/// the placeholders (a custom `init(from:)` that validates, an enum that is not `CaseIterable`)
/// leaves the shape *open* from there on: the keys asked before are known, the others are
/// not refused.
package indirect enum QueryShape: Sendable, Hashable {
    /// A value of one kind.
    case string, number, bool
    /// A date, in the garage's date encoding (a string or a number).
    case date
    /// An object: its keys; `isOpen` when some of its keys may not be known.
    case object([String: QueryShape], isOpen: Bool)
    case array(QueryShape)
    /// A nested `Identifiable` value, stored as its own object: its JSON here is its identifier.
    case reference(String)
    /// Anything (a custom encoding).
    case unknown

    /// The shape of `type`, learnt once per type.
    package static func of<T: Decodable>(_ type: T.Type) -> QueryShape {
        let key = ObjectIdentifier(type)
        if let known = cache.read({ $0[key] }) { return known }
        let shape = ShapeDecoder.shape(of: type, isRoot: true)
        cache.write { $0[key] = shape }
        return shape
    }

    private static let cache = Protected<[ObjectIdentifier: QueryShape]>([:])

    /// Why `field` can't be queried in a value of this shape, or `nil` when it can; `shape`
    /// becomes the shape of the value at `field` (`.unknown` when it is not known).
    package func problem(with field: Field, shape: inout QueryShape) -> String? {
        if field.path.contains(where: \.containsNUL) {
            return "Field(\(field.path.map(\.debugDescription).joined(separator: ", "))) holds the character U+0000 (NUL), which no stored coding key holds "
                + "(a value holding it is refused when parked)"
        }
        var current = self
        for (index, key) in field.path.enumerated() {
            let walked = field.path[..<index].joined(separator: ".")
            switch current {
            case .object(let keys, let isOpen):
                if let next = keys[key] {
                    current = next
                } else if isOpen {
                    current = .unknown
                } else {
                    let known = keys.keys.sorted().joined(separator: ", ")
                    return "\(walked.isEmpty ? "the type" : walked) has no property \"\(key)\" (its coding keys: \(known))"
                }
            case .reference(let type):
                return "\(walked) is a reference to a \(type), stored as an object of its own: its JSON here is its "
                    + "identifier; look inside it with Field(\(field.path[..<index].map { "\"\($0)\"" }.joined(separator: ", ")))"
                    + ".references(\(type).self, where: Field(\"\(key)\") == …)"
            case .unknown:
                shape = .unknown
                return nil
            default:
                return "\(walked) holds \(current.kindName), which has no property \"\(key)\""
            }
        }
        shape = current
        return nil
    }

    /// A short name of what the shape holds.
    package var kindName: String {
        switch self {
        case .string: return "strings"
        case .number: return "numbers"
        case .bool: return "booleans"
        case .date: return "dates"
        case .object: return "objects"
        case .array: return "arrays"
        case .reference: return "references (identifiers)"
        case .unknown: return "values of any kind"
        }
    }

    /// Whether a value of `kind` (a ``QueryValue``'s) may be found in a value of this shape.
    func accepts(_ value: QueryValue.Content) -> Bool {
        switch (self, value) {
        case (.unknown, _), (_, .null): return true
        case (.string, .string), (.reference, .string), (.number, .number), (.bool, .bool): return true
        case (.date, .string), (.date, .number): return true
        default: return false
        }
    }
}

extension RowQuery {
    /// Why the query can't be asked of objects of `shape` (a property they don't have, a
    /// comparison with a value of another kind than the property's, an order by a property
    package /// that holds arrays or objects), or `nil` when it can.
    func problem(in shape: QueryShape) -> String? {
        if let problem = Self.problem(of: predicate, in: shape, isInner: false) { return problem }
        func fieldShape(_ field: Field) -> (QueryShape, String?) {
            var found = QueryShape.unknown
            let problem = shape.problem(with: field, shape: &found)
            return (found, problem)
        }
        for sort in sortOrders {
            guard case .field(let field) = sort.key else { continue }
            let (found, problem) = fieldShape(field)
            if let problem { return problem }
            switch found {
            case .array, .object: return "\(field) holds \(found.kindName), which have no order: sort by one of their properties"
            default: continue
            }
        }
        return nil
    }

    /// Why `node` can't be asked of objects of `shape`, or `nil`; `isInner` inside a reference
    /// predicate, which looks one level deep and searches no text.
    private static func problem(of node: QueryPredicate.Node, in shape: QueryShape, isInner: Bool) -> String? {
        func fieldShape(_ field: Field) -> (QueryShape, String?) {
            var found = QueryShape.unknown
            let problem = shape.problem(with: field, shape: &found)
            return (found, problem)
        }
        func check(_ node: QueryPredicate.Node) -> String? {
            if let text = node.text, text.containsNUL {
                return "the text \(text.debugDescription) holds the character U+0000 (NUL), which no stored string holds "
                    + "(a value holding it is refused when parked)"
            }
            switch node {
            case .all, .syncStatus, .references, .referenceAmong: return nil
            case .textMatches:
                return isInner ? "a text search can't look inside a reference: search the referenced type's text instead" : nil
            case .referenceMatches(let field, let target, let inner):
                if isInner { return "a reference predicate looks one level deep: \(field) is inside another reference" }
                let (found, problem) = fieldShape(field)
                if let problem { return problem }
                switch found {
                case .reference(let name), .array(.reference(let name)):
                    if name != target.typeName { return "\(field) references \(name), not \(target.typeName)" }
                case .unknown, .array(.unknown): break
                default: return "\(field) holds \(found.kindName), not references to \(target.typeName)"
                }
                return Self.problem(of: inner, in: target.shape, isInner: true).map { "in \(target.typeName) (which \(field) references), \($0)" }
            case .and(let list), .or(let list):
                // An isIn(_:)'s comparisons, checked once.
                if case .or = node, let (field, values) = QueryPredicate.equalities(list) {
                    for value in Set(values) {
                        if let problem = check(.compare(field, .equal, value)) { return problem }
                    }
                    return nil
                }
                for inner in list {
                    if let problem = check(inner) { return problem }
                }
                return nil
            case .not(let inner): return check(inner)
            case .refused(let reason): return reason
            case .isNull(let field): return fieldShape(field).1
            case .compare(let field, _, let value):
                let (found, problem) = fieldShape(field)
                if let problem { return problem }
                if case .array = found { return "\(field) holds arrays: compare their elements with contains(_:)" }
                if case .object = found { return "\(field) holds objects: compare one of their properties, Field(\(field.path.map { "\"\($0)\"" }.joined(separator: ", ")), \"…\")" }
                return found.accepts(value) ? nil : "\(field) holds \(found.kindName), not \(QueryValue(value).kindName)"
            case .hasPrefix(let field, _), .containsText(let field, _):
                let (found, problem) = fieldShape(field)
                if let problem { return problem }
                switch found {
                case .string, .date, .reference, .unknown: return nil
                default: return "\(field) holds \(found.kindName), not strings: hasPrefix and containsText read strings"
                }
            case .arrayContains(let field, let value):
                let (found, problem) = fieldShape(field)
                if let problem { return problem }
                switch found {
                case .unknown: return nil
                case .array(let element):
                    return element.accepts(value) ? nil : "\(field) holds arrays of \(element.kindName), not of \(QueryValue(value).kindName)"
                default: return "\(field) holds \(found.kindName), not arrays: contains(_:) looks for an element of an array"
                }
            }
        }
        return check(node)
    }
}

extension QueryPredicate.Node {
    /// The text a comparison, a prefix, a text search or a reference compares with, if any.
    fileprivate var text: String? {
        switch self {
        case .compare(_, _, .string(let text)), .arrayContains(_, .string(let text)), .hasPrefix(_, let text),
             .containsText(_, let text), .textMatches(let text), .references(_, let text):
            return text
        default:
            return nil
        }
    }
}

extension RowQuery {
    /// Why the query compares a property that holds dates with a string when the garage writes
    package /// dates as numbers (its default `strategy`), which can't match: compare with a `Date`.
    func dateProblem(in shape: QueryShape, as strategy: JSONEncoder.DateEncodingStrategy) -> String? {
        guard case .deferredToDate = strategy else { return nil }
        func check(_ node: QueryPredicate.Node, _ shape: QueryShape) -> String? {
            var field: Field, element = false
            switch node {
            case .compare(let compared, _, .string): field = compared
            case .arrayContains(let compared, .string): (field, element) = (compared, true)
            case .and(let list), .or(let list):
                for inner in list {
                    if let problem = check(inner, shape) { return problem }
                }
                return nil
            case .not(let inner): return check(inner, shape)
            case .referenceMatches(_, let target, let inner): return check(inner, target.shape)
            default: return nil
            }
            var found = QueryShape.unknown
            _ = shape.problem(with: field, shape: &found)
            if element, case .array(let inner) = found { found = inner }
            guard case .date = found else { return nil }
            return "\(field) holds dates, which this garage writes as numbers (seconds since 2001-01-01), not strings: "
                + "compare it with a Date"
        }
        return check(predicate, shape)
    }
}

extension QueryValue {
    package /// A short name of the value's kind, for errors.
    var kindName: String {
        switch content {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        }
    }
}

extension RowQuery {
    /// The query, its numbers compared with properties that hold dates written as `strategy`
    /// writes dates: a date operand is its seconds since 2001-01-01, which is how the default
    package /// strategy writes it (and then nothing changes).
    func writingDates(in shape: QueryShape, as strategy: JSONEncoder.DateEncodingStrategy) throws -> RowQuery {
        if case .deferredToDate = strategy { return self }
        var query = self
        query.predicate = try Self.writingDates(predicate, in: shape, as: strategy)
        return query
    }

    private static func writingDates(_ node: QueryPredicate.Node, in shape: QueryShape,
                                     as strategy: JSONEncoder.DateEncodingStrategy) throws -> QueryPredicate.Node {
        func written(_ field: Field, _ value: QueryValue.Content, element: Bool) throws -> QueryValue.Content {
            guard case .number(let seconds) = value else { return value }
            var found = QueryShape.unknown
            _ = shape.problem(with: field, shape: &found)
            if element, case .array(let inner) = found { found = inner }
            guard case .date = found else { return value }
            switch try DateCoding.encodeWithFoundation(Date(timeIntervalSinceReferenceDate: seconds), strategy: strategy, codingPath: []) {
            case .string(let text): return .string(text)
            case .number(let number): return Double(number).map(QueryValue.Content.number) ?? value
            default: return value
            }
        }
        func rewrite(_ node: QueryPredicate.Node) throws -> QueryPredicate.Node {
            switch node {
            case .compare(let field, let comparison, let value): return .compare(field, comparison, try written(field, value, element: false))
            case .arrayContains(let field, let value): return .arrayContains(field, try written(field, value, element: true))
            case .and(let list): return .and(try list.map(rewrite))
            case .or(let list): return .or(try list.map(rewrite))
            case .not(let inner): return .not(try rewrite(inner))
            case .referenceMatches(let field, let target, let inner):
                return .referenceMatches(field, target, try writingDates(inner, in: target.shape, as: strategy))
            default: return node
            }
        }
        return try rewrite(node)
    }
}
