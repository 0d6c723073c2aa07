/// The stored type names of a process: which Swift type uses which name.
///
/// The first type to use a name binds it; another type that uses the same name, declared or
/// by default, is refused, unless one of the two shares its name (``StoredTypeNamed/sharesStoredTypeName``).
/// Names are per store, but the rule is per process: a type refused in one garage is refused
/// in all of them, and a type that works in one works in all.
///
/// `Identity.typeName(_:)` asks the process's registry; tests may make their own.
package struct TypeNames {
    /// What a type says about its stored name; worked out outside the lock (describing a type
    /// demangles its name, and a declared name is the app's code).
    package struct Declaration {
        package var type: ObjectIdentifier
        package var name: String
        package var shares: Bool
        /// `String(reflecting:)`: the type's module and the types it is nested in.
        package var fullName: String

        package init<T>(_ type: T.Type) {
            self.type = ObjectIdentifier(type)
            if let declaring = type as? any StoredTypeNamed.Type {
                name = declaring.storedTypeName
                shares = declaring.sharesStoredTypeName
            } else {
                name = String(describing: type)
                shares = false
            }
            fullName = String(reflecting: type)
        }
    }

    /// The names already checked, by type: the lookup of every park and retrieve.
    private var checked: [ObjectIdentifier: String] = [:]
    /// Who has each name: the first type that used it and doesn't share it.
    private var owners: [String: (type: ObjectIdentifier, fullName: String)] = [:]

    /// The full name of the type that has `name` in this process, other than `type`: its
    /// objects are stored under that name too.
    package func otherOwner(of name: String, than type: ObjectIdentifier) -> String? {
        guard let owner = owners[name], owner.type != type else { return nil }
        return owner.fullName
    }

    /// The name of a type checked before, or `nil`.
    package func checkedName(of type: ObjectIdentifier) -> String? {
        checked[type]
    }

    /// Binds the declared name to the type, unless another type has it.
    ///
    /// - throws: ``GarageError/typeNameCollision(typeName:type:existingType:)``, each time it is
    ///   asked, when another type that doesn't share the name used it first;
    ///   ``GarageError/cannotRegister(typeName:reason:)`` for a name holding U+0000.
    package mutating func check(_ declaration: Declaration) throws -> String {
        if let name = checked[declaration.type] { return name }
        if declaration.name.containsNUL {
            throw GarageError.cannotRegister(
                typeName: declaration.name.debugDescription,
                reason: "its stored type name holds the character U+0000 (NUL), which the store would cut the name at: "
                    + "declare a storedTypeName without it")
        }
        if !declaration.shares {
            if let owner = owners[declaration.name], owner.type != declaration.type {
                throw GarageError.typeNameCollision(
                    typeName: declaration.name, type: declaration.fullName, existingType: owner.fullName)
            }
            owners[declaration.name] = (declaration.type, declaration.fullName)
        }
        checked[declaration.type] = declaration.name
        return declaration.name
    }
}
