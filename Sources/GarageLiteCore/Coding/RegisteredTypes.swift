/// The types a garage can read back where another type is declared: subclasses parked where
/// their class is declared, and the values of ``Polymorphic`` properties. Their JSON holds
/// their type name (`{"@type": "Student", "@value": {...}}`), and this is where a garage finds
/// the type the name stands for. See ``Garage/register(_:)``.
package struct RegisteredTypes: Sendable {
    /// A registered type: how to decode its values.
    package struct Entry: Sendable {
        package var type: ObjectIdentifier
        /// `String(reflecting:)` of the type, for messages.
        package var fullName: String
        /// Decodes a value of the type (a row's own object when the flag is set).
        package var decode: @Sendable (GraphDecoder, JSONNode, CodingPath, Bool) throws -> Any
    }

    private var entries: [String: Entry] = [:]
    /// The registered subclasses whose objects are rows of an `Identifiable` class they
    /// descend from (the topmost one that is `Codable`): that class's stored and display names.
    private var storedClasses: [ObjectIdentifier: (name: String, className: String)] = [:]

    /// The key of the type name in a tagged value.
    package static let typeKey = "@type"
    /// The key of the value itself in a tagged value.
    package static let valueKey = "@value"

    /// Registers `T` under its stored type name, and under `formerNames`: values stored with
    /// those names read as `T`.
    ///
    /// - throws: ``GarageError/typeNameCollision(typeName:type:existingType:)`` when another
    ///   type has the name, in the process or in this garage's registrations;
    ///   ``GarageError/cannotRegister(typeName:reason:)`` for a subclass that has its class's
    ///   stored name.
    package mutating func register<T: Codable & SendableMetatype>(_ type: T.Type, formerNames: [String] = []) throws {
        var storedClass: AnyClass?
        if let aClass = T.self as? AnyClass {
            let declared = Identity.declaredName(T.self)
            for ancestor in Identity.superclasses(of: aClass) {
                if Identity.declaredName(ancestor) == declared {
                    throw GarageError.cannotRegister(
                        typeName: Identity.fullName(T.self),
                        reason: "it has the stored type name \"\(declared)\" of \(Identity.displayName(ancestor)), its "
                            + "superclass, so its values can't be told apart. Declare `class var storedTypeName: String` "
                            + "in \(Identity.displayName(ancestor)) (returning \"\(declared)\"), and override it in "
                            + "\(Identity.displayName(T.self)) with a name of its own")
                }
                if ancestor is any Identifiable.Type, ancestor is any Decodable.Type, ancestor is any Encodable.Type {
                    storedClass = ancestor
                }
            }
        }
        let name = try Identity.typeName(T.self)
        let fullName = Identity.fullName(T.self)
        for key in [name] + formerNames {
            if let existing = entries[key], existing.type != ObjectIdentifier(T.self) {
                throw GarageError.typeNameCollision(typeName: key, type: fullName, existingType: existing.fullName)
            }
        }
        let entry = Entry(type: ObjectIdentifier(T.self), fullName: fullName) { graph, value, path, isRow in
            try graph.unbox(T.self, from: value, codingPath: path, isRowObject: isRow)
        }
        for key in [name] + formerNames {
            entries[key] = entry
        }
        if let storedClass {
            storedClasses[ObjectIdentifier(T.self)] = (try Identity.typeName(storedClass), Identity.displayName(storedClass))
        }
    }

    /// The `Identifiable` class whose rows hold the objects of `type`, when it is a registered
    /// subclass of one: its stored name and its display name.
    package func storedClass<T>(of type: T.Type) -> (name: String, className: String)? {
        storedClasses.isEmpty ? nil : storedClasses[ObjectIdentifier(type)]
    }

    /// Adds the registrations of `other` that this one lacks.
    package mutating func merge(_ other: RegisteredTypes) {
        entries.merge(other.entries) { mine, _ in mine }
        storedClasses.merge(other.storedClasses) { mine, _ in mine }
    }

    /// The registered type stored under `name`, or `nil`.
    package func entry(named name: String) -> Entry? {
        entries[name]
    }

    /// Whether `type` is registered, under `name`.
    package func contains(_ type: ObjectIdentifier, named name: String) -> Bool {
        entries[name]?.type == type
    }

    /// The type name and value of a tagged value, or `nil` when `value` is not one.
    package static func tagged(_ value: JSONNode) -> (typeName: String, value: JSONNode)? {
        guard value.kind == .object, value.count == 2 else { return nil }
        var typeName: String?
        var tagged: JSONNode?
        for member in value.members {
            switch member.key.stringValue {
            case typeKey:
                guard let name = member.value.stringValue else { return nil }
                typeName = name
            case valueKey:
                tagged = member.value
            default:
                return nil
            }
        }
        guard let typeName, let tagged else { return nil }
        return (typeName, tagged)
    }

    /// Makes one of the given values, each stored as given.
    package init() {

    }
}
