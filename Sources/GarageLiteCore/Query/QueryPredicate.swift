/// A stored property of an object, by its coding key, or a path of coding keys into nested
/// values: `Field("title")`, `Field("address", "city")`.
///
/// A field names what the object's JSON holds, as its `CodingKeys` spell it, not the Swift
/// property: a property encoded under another key is queried by that key.
public struct Field: Sendable, Hashable, CustomStringConvertible {
    /// The coding keys from the object to the value.
    public let path: [String]

    /// The property `key`, then each of `keys` in the value before it.
    public init(_ key: String, _ keys: String...) {
        path = [key] + keys
    }

    /// The value at `path`, a list of coding keys (not empty).
    public init(path: [String]) {
        precondition(!path.isEmpty, "a field names at least one coding key")
        self.path = path
    }

    public var description: String { path.joined(separator: ".") }
}

/// What a query's objects must match: comparisons of their stored properties with values,
/// combined with `&&`, `||` and `!`.
///
/// ```swift
/// let urgent = Field("tags").contains("urgent") && !(Field("done") == true)
/// let recent = Field("notebook") == "Work" || Field("pinned") == true
/// ```
///
/// A comparison with a value of one kind (a string, a number, a boolean) matches only the
/// objects whose property holds a value of that kind; `!=` is the negation of `==`, so it
/// matches a missing property, and one of another kind.
public struct QueryPredicate: Sendable, Hashable, CustomStringConvertible {
    /// The comparisons a predicate is made of.
    package indirect enum Node: Sendable, Hashable {
        /// Matches every object.
        case all
        case compare(Field, Comparison, QueryValue.Content)
        /// The property is null or missing.
        case isNull(Field)
        /// The property is a string that starts with the text (Unicode scalar by scalar).
        case hasPrefix(Field, String)
        /// The property is a string that contains the text, ASCII letters in any case.
        case containsText(Field, String)
        /// The property is an array one of whose elements equals the value.
        case arrayContains(Field, QueryValue.Content)
        /// The object's row has this sync status.
        case syncStatus(SyncStatus)
        /// The type's text index holds every word of the search (``TextSearch``).
        case textMatches(String)
        /// The object references the object of this stored type and identifier, anywhere in
        /// its JSON (the store's index of references).
        case references(typeName: String, identifier: String)
        /// The property is a reference, or an array of references, to an object of the target
        /// type that matches the inner predicate (which the store answers first, one level).
        case referenceMatches(Field, QueryReferenceTarget, Node)
        /// The property is one of these identifiers, or an array holding one: a
        /// `referenceMatches` once the store answered its inner predicate.
        case referenceAmong(Field, [String])
        /// Every one must match: two or more, none of them an `and` (the operators flatten).
        case and([Node])
        /// One must match: two or more, none of them an `or` (the operators flatten).
        case or([Node])
        case not(Node)
        /// A predicate no store answers, and why: built when one would nest more than
        /// ``QueryPredicate/maximumDepth`` levels deep. Every query holding it is refused
        /// (``GarageError/invalidQuery(typeName:query:reason:)``).
        case refused(String)
    }

    /// How a comparison compares.
    package enum Comparison: String, Sendable, Hashable {
        case equal = "=="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }

    package let node: Node

    /// How many levels its `&&`, `||`, `!` and reference predicates nest, a comparison being
    /// one: bounded by ``maximumDepth``, so that nothing that walks a predicate (the check of a
    /// query, an engine's SQL, its description) recurses deeper than that, whatever the user
    /// built. A chain of `&&` (or of `||`) is one level however long: the operators flatten it.
    package let depth: Int

    /// The most levels a predicate may nest (see `depth`); one nested deeper is refused when a
    /// query holding it is asked.
    public static let maximumDepth = 32

    package init(_ node: Node) {
        self.node = node
        depth = 1
    }

    /// A predicate of `node`, `depth` levels deep; refused when that is more than ``maximumDepth``.
    private init(_ node: Node, depth: Int) {
        if depth > Self.maximumDepth {
            self.node = .refused("its predicate nests &&, ||, ! and reference predicates more than \(Self.maximumDepth) "
                + "levels deep: join conditions in flat chains (a && b && c), or match one of many values with isIn(_:)")
            self.depth = 1
        } else {
            self.node = node
            self.depth = depth
        }
    }

    /// `predicates` joined by `&&` (`isAnd`) or `||`, chains flattened: a refused one refuses the
    /// whole.
    private static func joining(_ predicates: [QueryPredicate], isAnd: Bool) -> QueryPredicate {
        var children: [Node] = []
        var depth = 1
        for predicate in predicates {
            switch predicate.node {
            case .refused: return predicate
            case .and(let list) where isAnd, .or(let list) where !isAnd:
                children += list
                depth = max(depth, predicate.depth)
            default:
                children.append(predicate.node)
                depth = max(depth, predicate.depth + 1)
            }
        }
        if children.count == 1 { return QueryPredicate(children[0], depth: depth - 1) }
        return QueryPredicate(isAnd ? .and(children) : .or(children), depth: depth)
    }

    /// `inner` inside one more level (a negation, a reference predicate).
    package static func nesting(_ node: Node, around inner: QueryPredicate) -> QueryPredicate {
        if case .refused = inner.node { return inner }
        return QueryPredicate(node, depth: inner.depth + 1)
    }

    /// Every object.
    public static let all = QueryPredicate(.all)

    /// The objects whose sync status is `status` (the row's, whatever the object encodes).
    public static func syncStatus(_ status: SyncStatus) -> QueryPredicate {
        QueryPredicate(.syncStatus(status))
    }

    /// The objects whose indexed text (``Garage/textIndex(_:on:)-6jtya``) holds every word of
    /// `search`: words of letters and digits, in any case (ASCII letters on every engine; other
    /// letters as the engine folds them); a word followed by `*` finds the words it begins.
    ///
    /// ```swift
    /// let milk = Query(Note.self).filter(.textMatches("milk bre*"))
    /// ```
    public static func textMatches(_ search: String) -> QueryPredicate {
        QueryPredicate(.textMatches(search))
    }

    /// The objects that reference the object of type `type` with identifier `identifier`, in
    /// any of their properties: its referrers, found in the store's index of references without
    /// reading the objects.
    ///
    /// ```swift
    /// let inWork = try garage.retrieve(Query(Note.self).filter(.references(Notebook.self, identifier: work.id)))
    /// ```
    public static func references<T: Identifiable, ID: GarageIdentifier>(_ type: T.Type, identifier: ID) -> QueryPredicate {
        QueryPredicate(.references(typeName: QueryReferenceTarget.name(of: T.self),
                                   identifier: (try? Identity.string(fromID: identifier)) ?? "\(identifier)"))
    }

    public var description: String { Self.describe(node) }

    /// How many of a list's elements a description names before it says how many more there
    /// are (a query's `isIn` of 10,000 values, in an error).
    private static let describedElements = 10

    private static func listed(_ texts: some Collection<String>, separator: String) -> String {
        let named = texts.prefix(describedElements).joined(separator: separator)
        return texts.count > describedElements ? named + separator + "… (\(texts.count - describedElements) more)" : named
    }

    private static func describe(_ node: Node) -> String {
        switch node {
        case .all: return "all"
        case .compare(let field, let comparison, let value):
            return "\(field) \(comparison.rawValue) \(QueryValue(value))"
        case .isNull(let field): return "\(field) == null"
        case .hasPrefix(let field, let prefix): return "\(field) hasPrefix \"\(prefix)\""
        case .containsText(let field, let text): return "\(field) containsText \"\(text)\""
        case .arrayContains(let field, let value): return "\(field) contains \(QueryValue(value))"
        case .syncStatus(let status): return "syncStatus == \(status)"
        case .textMatches(let search): return "text matches \"\(search)\""
        case .references(let typeName, let identifier): return "references \(typeName)(\(identifier))"
        case .referenceMatches(let field, let target, let inner): return "\(field) -> \(target.typeName) where \(describe(inner))"
        case .referenceAmong(let field, let identifiers):
            return "\(field) in [\(listed(identifiers.lazy.map { "\"\($0)\"" }, separator: ", "))]"
        case .and(let list): return "(\(listed(list.lazy.map(describe), separator: " && ")))"
        case .or(let list):
            if let (field, values) = equalities(list) {
                return "\(field) isIn [\(listed(values.lazy.map { "\(QueryValue($0))" }, separator: ", "))]"
            }
            return "(\(listed(list.lazy.map(describe), separator: " || ")))"
        case .not(let inner): return "!(\(describe(inner)))"
        case .refused: return "(refused)"
        }
    }

    /// The field and the values when every one of `alternatives` compares one field for
    /// equality with a value (an `isIn(_:)`), which engines answer with one list; `nil` otherwise.
    package static func equalities(_ alternatives: [Node]) -> (field: Field, values: [QueryValue.Content])? {
        guard case .compare(let field, .equal, _)? = alternatives.first else { return nil }
        var values: [QueryValue.Content] = []
        values.reserveCapacity(alternatives.count)
        for alternative in alternatives {
            guard case .compare(field, .equal, let value) = alternative else { return nil }
            values.append(value)
        }
        return (field, values)
    }

    /// Both must match.
    public static func && (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        joining([lhs, rhs], isAnd: true)
    }

    /// Either must match.
    public static func || (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        joining([lhs, rhs], isAnd: false)
    }

    /// Must not match (`!!p` is `p`).
    public static prefix func ! (predicate: QueryPredicate) -> QueryPredicate {
        if case .not(let inner) = predicate.node { return QueryPredicate(inner, depth: predicate.depth - 1) }
        return nesting(.not(predicate.node), around: predicate)
    }

    /// Every one of `predicates` must match (every object when there are none): one level
    /// however many there are.
    public static func all(_ predicates: [QueryPredicate]) -> QueryPredicate {
        predicates.isEmpty ? .all : joining(predicates, isAnd: true)
    }

    /// One of `predicates` must match (no object when there are none): one level however many
    /// there are.
    public static func any(_ predicates: [QueryPredicate]) -> QueryPredicate {
        predicates.isEmpty ? QueryPredicate(.not(.all), depth: 2) : joining(predicates, isAnd: false)
    }
}

extension Field {
    private func compare(_ comparison: QueryPredicate.Comparison, _ value: some QueryValueConvertible) -> QueryPredicate {
        let content = value.queryValue.content
        if content == .null {
            // Null is equal to null, and no more nor less than anything.
            return QueryPredicate(comparison == .equal ? .isNull(self) : .not(.all))
        }
        return QueryPredicate(.compare(self, comparison, content))
    }

    /// The property equals `value` (`nil`: is null or missing).
    public static func == (field: Field, value: some QueryValueConvertible) -> QueryPredicate {
        field.compare(.equal, value)
    }

    /// The property equals `value`: `Field("due") == nil` is null or missing.
    public static func == (field: Field, value: QueryValue) -> QueryPredicate {
        field.compare(.equal, value)
    }

    /// The property doesn't equal `value`: `Field("due") != nil` is present and not null.
    public static func != (field: Field, value: QueryValue) -> QueryPredicate {
        !(field == value)
    }

    /// The property doesn't equal `value`: it is missing, of another kind, or another value.
    public static func != (field: Field, value: some QueryValueConvertible) -> QueryPredicate {
        !(field == value)
    }

    /// The property is less than `value`: strings by their UTF-8 bytes, numbers as numbers,
    /// `false` before `true`.
    public static func < (field: Field, value: some QueryValueConvertible) -> QueryPredicate {
        field.compare(.less, value)
    }

    /// The property is less than or equal to `value` (see `<`).
    public static func <= (field: Field, value: some QueryValueConvertible) -> QueryPredicate {
        field.compare(.lessOrEqual, value)
    }

    /// The property is greater than `value` (see `<`).
    public static func > (field: Field, value: some QueryValueConvertible) -> QueryPredicate {
        field.compare(.greater, value)
    }

    /// The property is greater than or equal to `value` (see `<`).
    public static func >= (field: Field, value: some QueryValueConvertible) -> QueryPredicate {
        field.compare(.greaterOrEqual, value)
    }

    /// The property is within `range` (both bounds included).
    public func isBetween<V: QueryValueConvertible>(_ lower: V, and upper: V) -> QueryPredicate {
        self >= lower && self <= upper
    }

    /// The property equals one of `values`.
    /// However many values there are, the engines compare with one list (bound as one
    /// parameter): an `isIn` of 10,000 identifiers is one query.
    public func isIn<V: QueryValueConvertible>(_ values: [V]) -> QueryPredicate {
        .any(values.map { self == $0 })
    }

    /// The property is null, or the object doesn't encode it.
    public var isNull: QueryPredicate { QueryPredicate(.isNull(self)) }

    /// The property is a string that starts with `prefix` (compared Unicode scalar by scalar,
    /// as stored: no normalization, case matters).
    public func hasPrefix(_ prefix: String) -> QueryPredicate {
        QueryPredicate(.hasPrefix(self, prefix))
    }

    /// The property is a string that contains `text`, ignoring the case of ASCII letters (`"milk"`
    /// finds `"Buy MILK"`; other letters match as they are, on every engine).
    public func containsText(_ text: String) -> QueryPredicate {
        QueryPredicate(.containsText(self, text))
    }

    /// The property is a reference to an object of type `type` (or an array of references, one
    /// of which is to such an object) that matches `predicate`, a predicate on `type`'s own
    /// properties: one level, answered by the store before the query (no object is decoded).
    ///
    /// ```swift
    /// let pinned = Query(Note.self).filter(Field("notebook").references(Notebook.self, where: Field("pinned") == true))
    /// ```
    public func references<T: Identifiable & Decodable>(_ type: T.Type, where predicate: QueryPredicate) -> QueryPredicate {
        .nesting(.referenceMatches(self, QueryReferenceTarget(T.self), predicate.node), around: predicate)
    }

    /// The property is an array one of whose elements equals `value` (a tag in `tags`).
    public func contains(_ value: some QueryValueConvertible) -> QueryPredicate {
        QueryPredicate(.arrayContains(self, value.queryValue.content))
    }
}

/// The type a reference predicate looks into: its stored type name, and what its JSON holds
/// (to check the inner predicate against).
package struct QueryReferenceTarget: Sendable, Hashable {
    package let typeName: String
    let shape: QueryShape
package 
    init<T: Decodable>(_ type: T.Type) {
        typeName = Self.name(of: T.self)
        shape = QueryShape.of(T.self)
    }

    package /// The name a reference to `type` is stored under (as the shape of a type names it).
    static func name(of type: Any.Type) -> String {
        (try? Identity.typeName(type)) ?? String(describing: type)
    }
}
