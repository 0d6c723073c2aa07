/// A type that declares the type name its objects are stored under.
///
/// A garage keys every row by a type name and an identifier. By default the type name is
/// `String(describing: T.self)`, as in GarageStorage: the type's own name, without its module
/// or the types it is nested in, so `Billing.Item` and `Cart.Item` are both `Item`. Two
/// different types can't be stored under one name in a process: the second to be used throws
/// ``GarageError/typeNameCollision(typeName:type:existingType:)``. Declare a name of its own on
/// one of them:
///
/// ```swift
/// enum Cart {
///     struct Item: Codable, Identifiable, StoredTypeNamed {
///         static let storedTypeName = "Cart.Item"
///         var id: String
///     }
/// }
/// ```
///
/// The name is used wherever the garage names the type: its own rows, the references other
/// objects hold to it, claims, observation, ``Garage/count(_:withStatus:)-x947`` and
/// ``Garage/migrateAll(fromOldClassName:to:)-73yt5``. It is read once per process.
///
/// Declaring a new name does not move the objects already stored under the old one: move them,
/// and the references to them, with ``Garage/migrateAll(fromOldClassName:to:)-73yt5``:
///
/// ```swift
/// try garage.migrateAll(fromOldClassName: "Item", to: Cart.Item.self)
/// ```
public protocol StoredTypeNamed {
    /// The type name the objects of this type are stored under; by default
    /// `String(describing: Self.self)`.
    ///
    /// ```swift
    /// static let storedTypeName = "Cart.Item"
    /// ```
    ///
    /// Choose a name that stays the same when the type is renamed or moved, and that no other
    /// stored type uses. Changing it later means migrating the stored objects, as for a renamed
    /// type. A subclass inherits its class's name, and so is refused it: declare a
    /// `class var storedTypeName` and override it in the subclasses you park as themselves.
    static var storedTypeName: String { get }

    /// Whether this type may share its stored name with other types, as every type could in
    /// GarageStorage; `false` by default.
    ///
    /// ```swift
    /// // Reads the notes `Note` parks, without their bodies.
    /// struct NoteTitle: Codable, Identifiable, StoredTypeNamed {
    ///     static let storedTypeName = "Note"
    ///     static let sharesStoredTypeName = true
    ///     var id: String
    ///     var title: String
    /// }
    /// ```
    ///
    /// A type that shares its name is never refused with
    /// ``GarageError/typeNameCollision(typeName:type:existingType:)``, and doesn't keep the name
    /// from other types: it reads and writes the objects any type stored under that name. Use it
    /// only for types that are knowingly two views of the same stored objects, and park through
    /// one of them only: parking a `NoteTitle` would replace the note with its title.
    static var sharesStoredTypeName: Bool { get }
}

extension StoredTypeNamed {
    /// `String(describing: Self.self)`, the name a type that declares none is stored under.
    ///
    /// ```swift
    /// enum Cart { struct Item: StoredTypeNamed {} }
    /// Cart.Item.storedTypeName     // "Item"
    /// ```
    public static var storedTypeName: String { String(describing: Self.self) }

    /// `false`: the type's stored name is its own.
    ///
    /// ```swift
    /// Cart.Item.sharesStoredTypeName     // false
    /// ```
    public static var sharesStoredTypeName: Bool { false }
}
