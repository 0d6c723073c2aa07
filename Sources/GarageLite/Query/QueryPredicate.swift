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
        case and(Node, Node)
        case or(Node, Node)
        case not(Node)
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

    init(_ node: Node) {
        self.node = node
    }

    /// Every object.
    public static let all = QueryPredicate(.all)

    /// The objects whose sync status is `status` (the row's, whatever the object encodes).
    public static func syncStatus(_ status: SyncStatus) -> QueryPredicate {
        QueryPredicate(.syncStatus(status))
    }

    /// The objects whose indexed text (``Garage/textIndex(_:on:)-51khl``) holds every word of
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
        case .referenceAmong(let field, let identifiers): return "\(field) in \(identifiers)"
        case .and(let left, let right): return "(\(describe(left)) && \(describe(right)))"
        case .or(let left, let right): return "(\(describe(left)) || \(describe(right)))"
        case .not(let inner): return "!(\(describe(inner)))"
        }
    }

    /// Both must match.
    public static func && (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(.and(lhs.node, rhs.node))
    }

    /// Either must match.
    public static func || (lhs: QueryPredicate, rhs: QueryPredicate) -> QueryPredicate {
        QueryPredicate(.or(lhs.node, rhs.node))
    }

    /// Must not match.
    public static prefix func ! (predicate: QueryPredicate) -> QueryPredicate {
        QueryPredicate(.not(predicate.node))
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
    public func isIn<V: QueryValueConvertible>(_ values: [V]) -> QueryPredicate {
        values.map { self == $0 }.reduce(QueryPredicate(.not(.all))) { $0 || $1 }
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
        QueryPredicate(.referenceMatches(self, QueryReferenceTarget(T.self), predicate.node))
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

    init<T: Decodable>(_ type: T.Type) {
        typeName = Self.name(of: T.self)
        shape = QueryShape.of(T.self)
    }

    /// The name a reference to `type` is stored under (as the shape of a type names it).
    static func name(of type: Any.Type) -> String {
        (try? Identity.typeName(type)) ?? String(describing: type)
    }
}
