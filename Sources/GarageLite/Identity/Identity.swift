import Crypto
import Foundation

/// How the garage names objects: the type name of a row, and the identifier of an object.
enum Identity {
    /// The type name stored in a row: `String(describing: T.self)`, as GarageStorage.
    static func typeName<T>(_ type: T.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = typeNames.read({ $0[key] }) {
            return name
        }
        // Describing a type demangles its name at run time: worth remembering.
        let name = String(describing: type)
        typeNames.write { $0[key] = name }
        return name
    }

    private static let typeNames = Protected<[ObjectIdentifier: String]>([:])

    /// The identifier string of an `Identifiable` ID, or of an identifier passed to `retrieve`.
    ///
    /// - throws: ``GarageError/unsupportedIDConformance(_:)`` unless the ID is a `String`,
    ///   a `UUID` (its `uuidString`) or `LosslessStringConvertible` (its description).
    ///
    /// The decision is made on the type, not the value: an `Optional` ID is refused even when
    /// it holds a string, so that parking never depends on a value being `nil` or not.
    static func string<ID>(fromID id: ID) throws -> String {
        if ID.self == String.self, let string = id as? String { return string }
        if ID.self == UUID.self, let uuid = id as? UUID { return uuid.uuidString }
        if ID.self is any LosslessStringConvertible.Type, let convertible = id as? any LosslessStringConvertible {
            return convertible.description
        }
        throw GarageError.unsupportedIDConformance(String(describing: ID.self))
    }

    /// The identifier of an `Identifiable` value, or `nil` if the value is not `Identifiable`.
    static func declaredIdentifier(of value: Any) throws -> String? {
        guard let identifiable = value as? any Identifiable else { return nil }
        return try identifier(of: identifiable)
    }

    static func identifier<I: Identifiable>(of value: I) throws -> String {
        try string(fromID: value.id)
    }

    /// The identifier of a `Hashable` object that is not `Identifiable`: the SHA-256 of its
    /// canonical JSON (sorted keys, references as identifiers, no sync status), in lowercase
    /// hex. Unlike `hashValue`, it is the same in every process.
    static func contentIdentifier(ofJSON bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
