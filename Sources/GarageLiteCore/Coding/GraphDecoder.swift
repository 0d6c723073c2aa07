import Foundation

/// A row as the graph decoder reads it: its key, its JSON (decrypted), its sync status and
/// its revision.
package struct DecodableRow {
    package var key: ObjectKey
    package var json: JSONNode
    package var syncStatus: SyncStatus
    package var revision: Int64 = 0

    /// Makes one of the given values, each stored as given.
    package init(key: ObjectKey, json: JSONNode, syncStatus: SyncStatus, revision: Int64 = 0) {
        self.key = key
        self.json = json
        self.syncStatus = syncStatus
        self.revision = revision
    }
}

/// Rebuilds objects from rows, resolving each reference stub to the row it names.
///
/// One `GraphDecoder` serves one retrieve: all its rows come from one snapshot (the
/// `row` closure reads inside one read transaction), each row is decoded at most once,
/// and the same instance is returned for every reference to it.
package final class GraphDecoder {
    package let dateDecoding: DateDecoding
    package let rowLookup: (ObjectKey) throws -> DecodableRow?
    /// What a fresh-stack thread must see of the calling thread (see ``ThreadStack``).
    package let context: ThreadContext
    package private(set) var decoded: [ObjectKey: Any] = [:]
    /// The version a deleted object had, when the store remembers the deletion (its row is a
    /// tombstone: the object may be on the server), or `nil`: a reference to it in an array,
    /// set or dictionary is left out (see ``ReferenceCollection``), an optional one is `nil`,
    /// and a required one reads this version, so that the referrer still reads. `nil`: every
    /// missing row is missing.
    package var rememberedDeletion: ((ObjectKey) throws -> DecodableRow?)?
    /// The coding-path depths of the elements of the reference collections being decoded: a
    /// reference there to a remembered deletion is left out, not read.
    private var referenceElementDepths: [Int] = []
    /// The rows being decoded, outermost first: a reference back to one of them is a cycle.
    private var inProgress: [ObjectKey] = []
    /// Set while decoding continues on fresh stacks (see `GraphDecoder+Stack.swift`).
    package var relay: ThreadStack.Relay?
    /// Decrypts the text of a nested object that GarageStorage's Objective-C side stored
    /// encrypted (see ``GarageStorageShape``); `nil` without an encryption delegate.
    package var decryptNested: ((String) throws -> Data)?

    /// The types a value's stored type name may stand for (``Garage/register(_:)``).
    package let registry: RegisteredTypes
    /// Where the rows this decoder hands out are noted (``HandedOutVersions``), when they go to
    /// the app; `nil` for a decoder of bases or of a tool.
    package var handedOut: HandedOutVersions?
    private var handedOutRows = HandedOutVersions.Batch()

    /// - parameter row: Looks a row up by key, decrypted and parsed.
    package init(dateDecoding: DateDecoding, context: ThreadContext, registry: RegisteredTypes,
         row: @escaping (ObjectKey) throws -> DecodableRow?) {
        self.dateDecoding = dateDecoding
        self.context = context
        self.registry = registry
        self.rowLookup = row
    }

    deinit {
        if let handedOut, !handedOutRows.isEmpty { handedOut.add(handedOutRows) }
    }

    /// Decodes the object a row holds, setting its sync status and revision from the row.
    package func decode<T: Decodable>(_ type: T.Type, from row: DecodableRow) throws -> T {
        if let object = decoded[row.key] as? T {
            return object
        }
        let object = try decodeUncached(T.self, from: row)
        decoded[row.key] = object
        return object
    }

    /// Decodes the object of a row the call itself asked for (a retrieve, or a row of a
    /// listing: `retrieveAll`, a page, a claim), not one a reference leads to.
    ///
    /// A class instance is remembered, so that a later reference to the row is the same
    /// instance. A value is not: a reference to it decodes a copy either way, and
    /// remembering every row of a `retrieveAll` held the whole listing a second time, boxed.
    package func decodeRequested<T: Decodable>(_ type: T.Type, from row: DecodableRow) throws -> T {
        guard TypeInfo.of(T.self).isClass else {
            if let object = decoded[row.key] as? T { return object }
            return try decodeUncached(T.self, from: row)
        }
        return try decode(T.self, from: row)
    }

    /// Decodes the only object of a retrieve, when it references nothing: nothing else can
    /// refer to it, so it is neither remembered nor watched for cycles.
    package func decodeAlone<T: Decodable>(_ type: T.Type, from row: DecodableRow) throws -> T {
        var object: T
        do {
            object = try unbox(T.self, from: row.json, codingPath: .root, isRowObject: true)
        } catch let error as DecodingError {
            throw error.locating(row.key)
        }
        let info = TypeInfo.of(T.self)
        switch info.kind {
        case .identifiable, .inlineIdentifiable:
            try Self.checkIdentity(of: object, in: row.key, info)
        default:
            break
        }
        Self.setting(row.syncStatus, on: &object, info)
        Self.setting(revision: row.revision, on: &object, info)
        // Only for a decoder whose rows go to the app: the hash reads every byte of the row.
        if handedOut != nil, row.revision > 0 {
            handedOutRows.record(row.key, dataHash: row.json.document.bytes.withUnsafeBytes { HandedOutVersions.hash($0) },
                                 revision: row.revision)
        }
        return object
    }

    /// Throws ``GarageError/corruptData(typeName:identifier:reason:)`` when the `Identifiable`
    /// object a row holds has another identifier than the row's: its content was copied or
    /// moved from another object's row, and would be read as this one.
    private static func checkIdentity<T>(of object: T, in key: ObjectKey, _ info: TypeInfo) throws {
        // An ID type the garage doesn't support can't have been parked by it: nothing to compare.
        guard let identifiable = info.identifiable, let identifier = try? identifiable.identifier(ofValue: object),
              identifier != key.identifier else { return }
        throw GarageError.corruptData(
            typeName: key.typeName, identifier: key.identifier,
            reason: "it holds the object with identifier \(identifier), not \(key.identifier): its content was "
                + "copied or moved from another object's row. Park \(key.typeName)(\(key.identifier)) again, or delete it")
    }

    /// Sets `object`'s revision when its type is ``Revisioned``.
    private static func setting<T>(revision: Int64, on object: inout T, _ info: TypeInfo) {
        info.revisioned?.setRevision(revision, on: &object)
    }

    /// Sets `object`'s sync status when its type is ``Syncable``.
    private static func setting<T>(_ status: SyncStatus, on object: inout T, _ info: TypeInfo) {
        info.syncable?.setSyncStatus(status, on: &object)
    }

    private func decodeUncached<T: Decodable>(_ type: T.Type, from row: DecodableRow) throws -> T {
        if let start = inProgress.firstIndex(of: row.key) {
            throw GarageError.referenceCycle(
                typeName: row.key.typeName, identifier: row.key.identifier,
                cycle: (inProgress[start...] + [row.key]).map(\.description))
        }
        inProgress.append(row.key)
        defer { inProgress.removeLast() }
        return try decodeAlone(T.self, from: row)
    }

    /// The object a reference stub names; `nil` when its row is missing and `lenient`
    /// (the reference is optional).
    package func resolve<T: Decodable>(_ type: T.Type, identifier: String, codingPath: CodingPath,
                               lenient: Bool) throws -> T? {
        // A registered subclass's objects are rows of the class it descends from.
        let typeName = try registry.storedClass(of: T.self)?.name ?? Identity.typeName(T.self)
        let key = ObjectKey(typeName: typeName, identifier: identifier)
        if let object = decoded[key] as? T {
            return object
        }
        guard let row = try lookUpRow(key) else {
            if lenient { return nil }
            if referenceElementDepths.last != codingPath.depth, let deleted = try rememberedDeletion?(key) {
                return try decode(T.self, from: deleted)
            }
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath.keys,
                debugDescription: "Missing Identifiable reference: no object of type \(key.typeName) with "
                    + "identifier \(identifier) is parked. Park it again, or make the property optional."))
        }
        return try decode(T.self, from: row)
    }

    /// The object a non-optional reference stub names. Out of line, so that `unbox` doesn't
    /// build the metadata of `T?` on every call.
    @inline(never)
    private func resolveRequired<T: Decodable>(_ type: T.Type, identifier: String, codingPath: CodingPath) throws -> T {
        // `lenient: false` throws instead of returning nil.
        try resolve(T.self, identifier: identifier, codingPath: codingPath, lenient: false)!
    }

    /// Decodes the value of an optional that is present and not null: a reference to a
    /// missing row is `nil`.
    package func unboxPresent<T: Decodable>(_ type: T.Type, from value: JSONNode, codingPath: CodingPath) throws -> T? {
        let kind = TypeInfo.of(T.self).kind
        if case .identifiable = kind, let identifier = GarageStorageShape.referenceIdentifier(value) {
            return try resolve(T.self, identifier: identifier, codingPath: codingPath, lenient: true)
        }
        if value.kind == .string {
            switch kind {
            case .identifiable:
                return try resolve(T.self, identifier: value.stringValue!, codingPath: codingPath, lenient: true)
            case .inlineIdentifiable:
                return try unboxInline(T.self, fromString: value, codingPath: codingPath, lenient: true)
            default:
                break
            }
        }
        return try unbox(T.self, from: value, codingPath: codingPath)
    }

    /// An ``InlineIdentifiable`` value found as a string: its own encoding when its type
    /// decodes from one; otherwise a reference stub, written before the type adopted
    /// `InlineIdentifiable`, read from the row it names. `nil` when that row is missing and
    /// `lenient` (the value is optional).
    ///
    /// Inline first: a value that decodes from a string is never mistaken for a stub, and a
    /// stub costs the failed attempt only until its parent is parked again, inline.
    @inline(never)
    private func unboxInline<T: Decodable>(_ type: T.Type, fromString value: JSONNode, codingPath: CodingPath,
                                           lenient: Bool) throws -> T? {
        do {
            return try T(from: ReferenceDecoder(value: value, codingPath: codingPath, graph: self))
        } catch let inlineError as DecodingError {
            let string = value.stringValue!
            let key = ObjectKey(typeName: try Identity.typeName(T.self), identifier: string)
            if let object = decoded[key] as? T {
                return object
            }
            guard let row = try lookUpRow(key) else {
                if lenient { return nil }
                throw DecodingError.dataCorrupted(.init(
                    codingPath: codingPath.keys,
                    debugDescription: "Missing Identifiable reference: \(key.typeName) is InlineIdentifiable, but this "
                        + "value was stored as a reference, before the type adopted InlineIdentifiable, and no object "
                        + "of type \(key.typeName) with identifier \(string) is parked. Park it again, or make the "
                        + "property optional.",
                    underlyingError: inlineError))
            }
            return try decode(T.self, from: row)
        }
    }

    /// ``unboxInline(_:fromString:codingPath:lenient:)`` where the value is required. Out of line:
    /// a `T?` in ``unbox(_:from:codingPath:isRowObject:)``'s body made every call of that
    /// unspecialized generic function look up `Optional<T>`'s metadata (about 375 instructions
    /// each, several per retrieve), whatever the branch taken.
    @inline(never)
    private func unboxInlineRequired<T: Decodable>(_ type: T.Type, fromString value: JSONNode, codingPath: CodingPath) throws -> T {
        // `lenient: false` throws instead of returning nil.
        try unboxInline(T.self, fromString: value, codingPath: codingPath, lenient: false)!
    }

    /// Decodes one value at `codingPath`. A string where an `Identifiable` is expected is a
    /// reference stub; an ``InlineIdentifiable`` is decoded inline.
    package func unbox<T: Decodable>(_ type: T.Type, from value: JSONNode, codingPath: CodingPath,
                             isRowObject: Bool = false) throws -> T {
        let info = TypeInfo.of(T.self)
        if info.isClass, let (typeName, tagged) = RegisteredTypes.tagged(value) {
            return try unboxSubclassInstance(T.self, typeName: typeName, from: tagged, codingPath: codingPath,
                                             isRowObject: isRowObject)
        }
        switch info.kind {
        case .primitive(let primitive):
            return try decodePrimitive(primitive, from: value, codingPath: codingPath)
        case .date:
            return try decodeDate(from: value, codingPath: codingPath) as! T
        case .data:
            guard let text = value.stringValue else {
                throw String.typeMismatch(value, codingPath)
            }
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: codingPath.keys, debugDescription: "Expected Data as a base64 string."))
            }
            return data as! T
        case .url:
            guard let text = value.stringValue else { throw String.typeMismatch(value, codingPath) }
            guard let url = URL(string: text) else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: codingPath.keys, debugDescription: "Invalid URL string \"\(text)\"."))
            }
            return url as! T
        case .decimal:
            guard let text = value.numberText, let decimal = Decimal(string: text, locale: nil) else {
                throw DecodingError.typeMismatch(Decimal.self, .init(
                    codingPath: codingPath.keys, debugDescription: "Expected a number for Decimal but found \(value.kindName)."))
            }
            return decimal as! T
        case .optional(let optional):
            return try decodeOptional(optional, from: value, codingPath: codingPath)
        case .primitiveArray(let array) where value.kind == .array:
            return try decodePrimitiveArray(array, from: value, codingPath: codingPath)
        case .identifiable where !isRowObject:
            if let identifier = value.stringValue {
                return try resolveRequired(T.self, identifier: identifier, codingPath: codingPath)
            }
            if let identifier = GarageStorageShape.referenceIdentifier(value) {
                return try resolveRequired(T.self, identifier: identifier, codingPath: codingPath)
            }
        case .inlineIdentifiable where !isRowObject:
            if value.kind == .string {
                return try unboxInlineRequired(T.self, fromString: value, codingPath: codingPath)
            }
        default:
            break
        }
        if let text = GarageStorageShape.anonymousObjectText(value) {
            return try unboxAnonymous(T.self, text: text, value: value, codingPath: codingPath)
        }
        if info.dropsMissingReferences {
            return try unboxReferences(T.self, from: value, codingPath: codingPath)
        }
        let legacyKeys = info.legacyKeys
        if codingPath.depth & 7 == 0, ThreadStack.isShort {
            return try onFreshStack {
                try T(from: ReferenceDecoder(value: value, codingPath: codingPath, graph: self, legacyKeys: legacyKeys))
            }
        }
        return try T(from: ReferenceDecoder(value: value, codingPath: codingPath, graph: self, legacyKeys: legacyKeys))
    }

    /// An array, set or dictionary of references (``ReferenceCollection``): decoded as it is
    /// stored, or, when a reference's row is gone, without it. Nothing is looked up twice
    /// unless a row is missing.
    @inline(never)
    private func unboxReferences<T: Decodable>(_ type: T.Type, from value: JSONNode, codingPath: CodingPath) throws -> T {
        func decode(_ value: JSONNode) throws -> T {
            if codingPath.depth & 7 == 0, ThreadStack.isShort {
                return try onFreshStack { try T(from: ReferenceDecoder(value: value, codingPath: codingPath, graph: self)) }
            }
            return try T(from: ReferenceDecoder(value: value, codingPath: codingPath, graph: self))
        }
        referenceElementDepths.append(codingPath.depth + 1)
        defer { referenceElementDepths.removeLast() }
        do {
            return try decode(value)
        } catch let error as DecodingError where Self.isMissingReference(error) {
            guard let collection = T.self as? any ReferenceCollection.Type else { throw error }
            return try decode(collection.droppingMissingReferences(from: value, in: self))
        }
    }

    /// A value stored with its type name (``RegisteredTypes``), decoded as the registered type
    /// of that name.
    ///
    /// - throws: `DecodingError.dataCorrupted` naming the type when the garage doesn't know it.
    package func unboxRegistered(typeName: String, from value: JSONNode, codingPath: CodingPath,
                         isRowObject: Bool = false) throws -> Any {
        guard let entry = registry.entry(named: typeName) else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: codingPath.keys,
                debugDescription: "The value stored here is a \(typeName), a type this garage doesn't know: register "
                    + "it with garage.register(\(typeName).self) before retrieving."))
        }
        return try entry.decode(self, value, codingPath, isRowObject)
    }

    /// An instance of a subclass stored where its class `T` is declared.
    @inline(never)
    private func unboxSubclassInstance<T>(_ type: T.Type, typeName: String, from value: JSONNode,
                                          codingPath: CodingPath, isRowObject: Bool) throws -> T {
        let object = try unboxRegistered(typeName: typeName, from: value, codingPath: codingPath, isRowObject: isRowObject)
        guard let instance = object as? T else {
            throw DecodingError.typeMismatch(T.self, .init(
                codingPath: codingPath.keys,
                debugDescription: "The value stored here is a \(typeName), which is not a \(Identity.displayName(T.self))."))
        }
        return instance
    }

    /// A nested object GarageStorage's Objective-C side stored as the text of its JSON
    /// (encrypted when it had a delegate), with its sync status beside it.
    @inline(never)
    private func unboxAnonymous<T: Decodable>(_ type: T.Type, text: String, value: JSONNode,
                                              codingPath: CodingPath) throws -> T {
        let json: JSONNode
        do {
            json = try JSONDocument(parsing: text).root
        } catch {
            guard let decryptNested else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: codingPath.keys, debugDescription: "A nested object stored by GarageStorage's "
                        + "Objective-C side is not JSON: it may be encrypted, and the garage has no dataEncryptionDelegate."))
            }
            do {
                json = try JSONDocument(parsing: try decryptNested(text)).root
            } catch {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: codingPath.keys, debugDescription: "A nested object stored by GarageStorage's "
                        + "Objective-C side can't be read, decrypted or not: \(error)", underlyingError: error))
            }
        }
        let status = GarageStorageShape.anonymousSyncStatus(value)
        // A `Migratable` property: the status belongs to the value it wraps, as in GarageStorage.
        if let wrapper = T.self as? any AnonymousObjectWrapper.Type {
            return try wrapper.unwrappingAnonymous(json, syncStatus: status, codingPath: codingPath, in: self) as! T
        }
        return try unboxAnonymousContent(T.self, from: json, syncStatus: status, codingPath: codingPath)
    }

    /// The value of a nested object GarageStorage's Objective-C side stored anonymously, from
    /// its JSON (`json`, decrypted), with `syncStatus`, the status stored beside it, when the
    /// value is ``Syncable``.
    ///
    /// The Objective-C side kept the status beside the text, never in it: a `syncStatus` the
    /// text lacks reads as that status (as a row's missing `syncStatus` reads as its column's),
    /// and the status beside the text wins over one in it, as GarageStorage's decoders had it.
    package func unboxAnonymousContent<V: Decodable>(_ type: V.Type, from json: JSONNode, syncStatus status: SyncStatus?,
                                              codingPath: CodingPath) throws -> V {
        guard V.self is any Syncable.Type else { return try unbox(V.self, from: json, codingPath: codingPath) }
        var json = json
        if json.kind == .object, json.member("syncStatus") == nil, case .object(var members) = json.value {
            members.append(JSONMember(key: "syncStatus", value: .number(String((status ?? .undetermined).rawValue))))
            json = JSONDocument(.object(members)).root
        }
        var object = try unbox(V.self, from: json, codingPath: codingPath)
        if let status { Self.setting(status, on: &object, TypeInfo.of(V.self)) }
        return object
    }

    private func decodePrimitive<T, P: JSONPrimitive>(_ primitive: P.Type, from value: JSONNode,
                                                       codingPath: CodingPath) throws -> T {
        try P.decode(from: value, codingPath: codingPath) as! T
    }

    private func decodePrimitiveArray<T, A: PrimitiveArray>(_ array: A.Type, from value: JSONNode,
                                                             codingPath: CodingPath) throws -> T {
        try A.decodeElements(from: value, codingPath: codingPath) as! T
    }

    private func decodeOptional<T, O: OptionalReference>(_ optional: O.Type, from value: JSONNode,
                                                          codingPath: CodingPath) throws -> T {
        try O.decodeOptional(from: value, codingPath: codingPath, graph: self) as! T
    }

    private func decodeDate(from value: JSONNode, codingPath: CodingPath) throws -> Date {
        func number() throws -> Double { try Double.decode(from: value, codingPath: codingPath) }
        func string() throws -> String { try String.decode(from: value, codingPath: codingPath) }
        let strategy: JSONDecoder.DateDecodingStrategy
        switch dateDecoding {
        case .garageDefault:
            switch value.kind {
            case .number: return Date(timeIntervalSinceReferenceDate: try number())
            case .string: return try DateCoding.decodeDefault(string: value.stringValue!, codingPath: codingPath.keys)
            default:
                if let text = GarageStorageShape.transformableDateText(value) {
                    return try DateCoding.decodeDefault(string: text, codingPath: codingPath.keys)
                }
                throw Date.mismatch(value, codingPath)
            }
        case .strategy(let chosen):
            strategy = chosen
        }
        switch strategy {
        case .deferredToDate:
            return Date(timeIntervalSinceReferenceDate: try number())
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try number())
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try number() / 1000)
        case .iso8601:
            let text = try string()
            guard let date = ISO8601Text.date(from: text) else {
                throw DecodingError.dataCorrupted(.init(
                    codingPath: codingPath.keys, debugDescription: "Expected an ISO 8601 date but found \"\(text)\"."))
            }
            return date
        case .custom(let decode):
            return try decode(ReferenceDecoder(value: value, codingPath: codingPath, graph: self))
        #if canImport(Darwin)
        default:
            // `.formatted` (on Linux, `.formatted` is a `.custom` closure) and future strategies.
            return try DateCoding.decodeWithFoundation(value.value, strategy: strategy, codingPath: codingPath.keys)
        #endif
        }
    }
}

