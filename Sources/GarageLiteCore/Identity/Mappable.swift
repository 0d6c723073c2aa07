/// A `Codable` object identified by a string-convertible identifier.
///
/// This is GarageStorage's protocol, kept so that its users switch by changing the import.
///
/// ```swift
/// final class Person: Mappable {
///     var id: String { name }
///     var name: String
///     var brother: Person?     // parked as its own row, referenced by identifier
/// }
/// ```
public protocol Mappable: Codable, Identifiable where ID: LosslessStringConvertible {}
