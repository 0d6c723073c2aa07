/// A type whose properties were renamed: objects stored under the former keys read under the
/// new ones, without a migration.
///
/// ```swift
/// struct Human: Codable, Identifiable, LegacyKeyed {
///     static let legacyKeys = ["firstName": ["name"]]    // `firstName` was `name`
///     var id: String
///     var firstName: String
/// }
/// ```
///
/// Reading a `Human`, a key the stored JSON lacks is looked up under its former keys, in
/// order: inline values and objects behind references alike, wherever a garage decodes the
/// type. Parking writes the current keys only, so a row holds the new key once it is parked
/// again. Declared on the type rather than registered with a garage, so that every garage,
/// and every process, reads it the same way.
///
/// The keys are those of the type's own keyed container (its `CodingKeys`), not of the
/// containers nested in it.
public protocol LegacyKeyed {
    /// The former keys of renamed properties, by current key: `["firstName": ["name"]]`.
    static var legacyKeys: [String: [String]] { get }
}
