@testable import GarageLite

// Spelling JSON objects as dictionary literals in expectations.
extension JSONValue {
    static func object(_ members: [String: JSONValue]) -> JSONValue {
        .object(members.map { JSONMember(key: $0.key, value: $0.value) })
    }
}

extension Array where Element == JSONMember {
    /// The value of the last member named `key`.
    subscript(key: String) -> JSONValue? {
        last { $0.key == key }?.value
    }
}
