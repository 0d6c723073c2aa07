/// A parked object's type name and identifier: the key of its row, and how reports and errors name it.
public struct ObjectKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The type name: the type's ``StoredTypeNamed/storedTypeName`` if it declares one,
    /// otherwise `String(describing: T.self)`.
    public var typeName: String
    /// The identifier the object is parked under.
    public var identifier: String

    /// The key of the object of type name `typeName` parked under `identifier`.
    public init(typeName: String, identifier: String) {
        self.typeName = typeName
        self.identifier = identifier
    }

    /// `Type(identifier)`.
    public var description: String { "\(typeName)(\(identifier))" }

    /// Orders by type name, then identifier.
    public static func < (lhs: ObjectKey, rhs: ObjectKey) -> Bool {
        (lhs.typeName, lhs.identifier) < (rhs.typeName, rhs.identifier)
    }
}

extension String {
    /// Whether the text contains U+0000, at which SQLite's text functions, and so what is read
    /// back from the store, would cut it. Scanned in place: the UTF-8 view's `contains` cost
    /// about 30 instructions a byte, a fifth of an encrypted park for its envelope.
    package var containsNUL: Bool {
        var text = self
        return text.withUTF8 { $0.contains(0) }
    }
}
