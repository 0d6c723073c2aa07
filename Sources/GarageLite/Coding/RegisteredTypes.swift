/// The types a garage can read back where another type is declared: subclasses parked where
/// their class is declared, and the values of ``Polymorphic`` properties. Their JSON holds
/// their type name (`{"@type": "Student", "@value": {...}}`), and this is where a garage finds
/// the type the name stands for. See ``Garage/register(_:)``.
struct RegisteredTypes: Sendable {
    /// A registered type: how to decode its values.
    struct Entry: Sendable {
        var type: ObjectIdentifier
        /// `String(reflecting:)` of the type, for messages.
        var fullName: String
        /// Decodes a value of the type (a row's own object when the flag is set).
        var decode: @Sendable (GraphDecoder, JSONValue, CodingPath, Bool) throws -> Any
    }

    private var entries: [String: Entry] = [:]

    /// The key of the type name in a tagged value.
    static let typeKey = "@type"
    /// The key of the value itself in a tagged value.
    static let valueKey = "@value"

    /// Registers `T` under its stored type name.
    ///
    /// - throws: ``GarageError/typeNameCollision(typeName:type:existingType:)`` when another
    ///   type has the name, in the process or in this garage's registrations.
    mutating func register<T: Codable & SendableMetatype>(_ type: T.Type) throws {
        let name = try Identity.typeName(T.self)
        let fullName = Identity.fullName(T.self)
        if let existing = entries[name], existing.type != ObjectIdentifier(T.self) {
            throw GarageError.typeNameCollision(typeName: name, type: fullName, existingType: existing.fullName)
        }
        entries[name] = Entry(type: ObjectIdentifier(T.self), fullName: fullName) { graph, value, path, isRow in
            try graph.unbox(T.self, from: value, codingPath: path, isRowObject: isRow)
        }
    }

    /// Adds the registrations of `other` that this one lacks.
    mutating func merge(_ other: RegisteredTypes) {
        entries.merge(other.entries) { mine, _ in mine }
    }

    /// The registered type stored under `name`, or `nil`.
    func entry(named name: String) -> Entry? {
        entries[name]
    }

    /// Whether `type` is registered, under `name`.
    func contains(_ type: ObjectIdentifier, named name: String) -> Bool {
        entries[name]?.type == type
    }

    /// The type name and value of a tagged value, or `nil` when `value` is not one.
    static func tagged(_ value: JSONValue) -> (typeName: String, value: JSONValue)? {
        guard case .object(let members) = value, members.count == 2 else { return nil }
        var typeName: String?
        var tagged: JSONValue?
        for member in members {
            switch member.key {
            case typeKey:
                guard case .string(let name) = member.value else { return nil }
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
}
