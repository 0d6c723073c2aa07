/// Finds the members of a tree's object (``JSONValue``: merges, comparisons) by key: a scan for the
/// few members of most objects, an index built once for large ones. With a key repeated in the
/// document, the last one wins (the graph decoder reads documents: ``NodeMembers``).
package struct MemberLookup {
    package let members: [JSONMember]
    private let index: [String: Int]?

    private static let indexThreshold = 16

    package init(_ members: [JSONMember]) {
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

    package subscript(key: String) -> JSONValue? {
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
