/// Finds an object's members by key: a scan for the few members of most objects, an index
/// built once for large ones. With a key repeated in the document, the last one wins.
struct MemberLookup {
    let members: [JSONMember]
    private let index: [String: Int]?

    private static let indexThreshold = 16

    init(_ members: [JSONMember]) {
        self.members = members
        if members.count > Self.indexThreshold {
            var index: [String: Int] = [:]
            index.reserveCapacity(members.count)
            for (position, member) in members.enumerated() {
                index[member.key] = position
            }
            self.index = index
        } else {
            self.index = nil
        }
    }

    /// The keys renamed members had before (see ``LegacyKeyed``), by current key: a key
    /// missing from the object is looked up under them, in order.
    var legacyKeys: [String: [String]]?

    subscript(key: String) -> JSONValue? {
        if let value = member(key) { return value }
        guard let legacyKeys, let former = legacyKeys[key] else { return nil }
        for key in former {
            if let value = member(key) { return value }
        }
        return nil
    }

    private func member(_ key: String) -> JSONValue? {
        if let index {
            return index[key].map { members[$0].value }
        }
        var position = members.count - 1
        while position >= 0 {
            if members[position].key == key { return members[position].value }
            position -= 1
        }
        return nil
    }
}
