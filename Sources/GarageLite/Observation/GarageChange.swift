import GarageLiteCore
/// A change to objects of one type, delivered to observers after the commit that made it.
///
/// See ``Garage/changes(of:)``.
public struct GarageChange: Sendable, Hashable, CustomStringConvertible {
    /// What happened to the object, or to every object of the type.
    public enum Kind: Sendable, Hashable {
        /// Parked (inserted or updated), or moved to this type by `migrateAll`.
        case parked
        /// Deleted, or moved to another type by `migrateAll`.
        case deleted
        /// Only its sync status changed (`setSyncStatus`, or a sync job's claim, complete or release).
        case syncStatusChanged
    }

    /// The type name of the objects, as ``ObjectKey/typeName``.
    public var typeName: String
    /// The identifier of the object, or `nil` when the change concerns every object of the
    /// type (`deleteAll`, `deleteAllObjects`, `migrateAll`).
    public var identifier: String?
    public var kind: Kind

    public init(typeName: String, identifier: String?, kind: Kind) {
        self.typeName = typeName
        self.identifier = identifier
        self.kind = kind
    }

    public var description: String {
        "\(kind) \(typeName)(\(identifier ?? "*"))"
    }
}
