import Crypto
import Foundation

/// How the garage names objects: the type name of a row, and the identifier of an object.
package enum Identity {
    /// The type name stored in the rows of `type`, and in the references to them: its
    /// ``StoredTypeNamed/storedTypeName`` when it declares one, otherwise
    /// `String(describing: T.self)`, as GarageStorage. Every part of the garage names a type
    /// through this function.
    ///
    /// - throws: ``GarageError/typeNameCollision(typeName:type:existingType:)`` when another
    ///   type of this process uses that name (see ``TypeNames``).
    ///
    /// Once a type is checked, this costs a lock and a dictionary lookup.
    package static func typeName<T>(_ type: T.Type) throws -> String {
        let key = ObjectIdentifier(type)
        if let name = typeNames.read({ $0.checkedName(of: key) }) {
            return name
        }
        let declaration = TypeNames.Declaration(type)
        return try typeNames.write { try $0.check(declaration) }
    }

    /// The stored type names of this process.
    private static let typeNames = Protected(TypeNames())

    /// The name `T` declares, or has by default, without checking or binding it.
    package static func declaredName<T>(_ type: T.Type) -> String {
        TypeNames.Declaration(type).name
    }

    /// Throws ``GarageError/ambiguousMigration(oldName:type:otherType:)`` when another type
    /// of this process is stored under `name`: moving the objects of that name would take it
    /// from that type.
    package static func checkNotOwned<T>(_ name: String, byOtherThan type: T.Type) throws {
        if let other = typeNames.read({ $0.otherOwner(of: name, than: ObjectIdentifier(type)) }) {
            throw GarageError.ambiguousMigration(oldName: name, type: fullName(type), otherType: other)
        }
    }

    /// The superclasses of `aClass`, nearest first.
    package static func superclasses(of aClass: AnyClass) -> [AnyClass] {
        var classes: [AnyClass] = []
        var next: AnyClass? = _getSuperclass(aClass)
        while let current = next {
            classes.append(current)
            next = _getSuperclass(current)
        }
        return classes
    }

    /// Throws ``GarageError/ambiguousMigration(oldName:type:otherType:)`` when `oldName` is
    /// `T`'s own short name, which it left for a declared one, and another type of this process
    /// is stored under it: the objects stored under that name are then both types', and moving
    /// them all to `T` would take the other's. (A type renamed from another, such as
    /// `RenamedCounter` from `Counter`, moves every object of the old name, as in GarageStorage.)
    package static func checkCanMigrate<T>(from oldName: String, to type: T.Type) throws {
        guard String(describing: type) == oldName else { return }
        if let other = typeNames.read({ $0.otherOwner(of: oldName, than: ObjectIdentifier(type)) }) {
            throw GarageError.ambiguousMigration(oldName: oldName, type: String(reflecting: type), otherType: other)
        }
    }

    /// The identifier string of an `Identifiable` ID, or of an identifier passed to `retrieve`.
    ///
    /// - throws: ``GarageError/unsupportedIDConformance(_:)`` unless the ID is a `String`,
    ///   a `UUID` (its `uuidString`) or `LosslessStringConvertible` (its description).
    ///
    /// The decision is made on the type, not the value: an `Optional` ID is refused even when
    /// it holds a string, so that parking never depends on a value being `nil` or not.
    ///
    /// Identifiers are compared as Swift compares strings: `"caf\u{E9}"` and `"cafe\u{301}"` are one
    /// identifier, stored in Unicode's composed form (NFC).
    package static func string<ID>(fromID id: ID) throws -> String {
        if ID.self == String.self, let string = id as? String { return canonical(string) }
        if ID.self == UUID.self, let uuid = id as? UUID { return uuid.uuidString }
        if ID.self is any LosslessStringConvertible.Type, let convertible = id as? any LosslessStringConvertible {
            return canonical(convertible.description)
        }
        throw GarageError.unsupportedIDConformance(String(describing: ID.self))
    }

    /// `identifier` in Unicode's composed form (NFC), so that the store, which compares bytes,
    /// finds the identifiers Swift finds equal. ASCII, the common case, is already composed.
    private static func canonical(_ identifier: String) -> String {
        var bytes = identifier
        if bytes.withUTF8({ !$0.contains { $0 >= 0x80 } }) { return identifier }
        return identifier.precomposedStringWithCanonicalMapping
    }

    /// Throws ``GarageError/collectionNotAnObject(typeName:operation:)`` when `T` is a
    /// collection that is not an object of its own (not `Identifiable`): an array, a set or a
    /// dictionary given to `park` (which meant `parkAll`), `delete` or `setSyncStatus`. A
    /// `Hashable` array would otherwise be stored as one row, named by its content. Strings
    /// and `Data` are collections too, but values.
    package static func checkIsObject<T>(_ type: T.Type, operation: @autoclosure () -> String) throws {
        guard type is any Collection.Type, !(type is any Identifiable.Type),
              !(type is any StringProtocol.Type), type != Data.self else { return }
        throw GarageError.collectionNotAnObject(typeName: try typeName(T.self), operation: operation())
    }

    /// The name Objective-C gives `aClass` (`NSStringFromClass`): what GarageStorage stored an
    /// Objective-C object's rows under.
    package static func className(_ aClass: AnyClass) -> String {
        #if canImport(ObjectiveC)
        NSStringFromClass(aClass)
        #else
        // Foundation without the Objective-C runtime stops the process for a nested class;
        // for a top-level one its answer is this one.
        String(reflecting: aClass)
        #endif
    }

    /// `T`'s name with its module and the types it is nested in (`String(reflecting:)`), for
    /// messages that must tell two types of one name apart.
    package static func fullName(_ type: Any.Type) -> String {
        String(reflecting: type)
    }

    /// `T`'s name as its code spells it (`String(describing:)`), for messages.
    package static func displayName(_ type: Any.Type) -> String {
        String(describing: type)
    }

    /// Whether `T`'s objects declare their identifier (they are `Identifiable`), rather than
    /// being identified by their content.
    package static func isIdentifiable<T>(_ type: T.Type) -> Bool {
        type is any Identifiable.Type
    }

    /// Whether `T`'s objects are identified by their content: `Hashable`, not `Identifiable`.
    package static func isContentIdentified<T>(_ type: T.Type) -> Bool {
        !(type is any Identifiable.Type) && type is any Hashable.Type
    }

    /// The identifier of an `Identifiable` value, or `nil` if the value is not `Identifiable`.
    package static func declaredIdentifier(of value: Any) throws -> String? {
        guard let identifiable = value as? any Identifiable else { return nil }
        return try identifier(of: identifiable)
    }

    /// - throws: ``GarageError/invalidIdentifier(typeName:identifier:reason:)`` for an identifier
    ///   that contains U+0000, which SQLite's text functions, and so the identifiers read back
    ///   from the store, would cut short.
    package static func identifier<I: Identifiable>(of value: I) throws -> String {
        let identifier = try string(fromID: value.id)
        if identifier.containsNUL {
            throw GarageError.invalidIdentifier(
                typeName: try typeName(I.self), identifier: identifier,
                reason: "it contains the character U+0000 (NUL), which the store would cut the identifier at")
        }
        return identifier
    }

    /// The identifier of a `Hashable` object that is not `Identifiable`: the SHA-256 of its
    /// canonical JSON (sorted keys, references as identifiers, no sync status), in lowercase
    /// hex. Unlike `hashValue`, it is the same in every process.
    package static func contentIdentifier(ofJSON bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
