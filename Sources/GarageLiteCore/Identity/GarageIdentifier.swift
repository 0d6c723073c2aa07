import Foundation

/// A type whose values name parked objects in the calls that take an `identifier:`, such as
/// ``Garage/retrieve(_:identifier:)-1mhtr`` and ``Garage/delete(_:identifier:rule:)-14x5x``.
///
/// ```swift
/// let note = try garage.retrieve(Note.self, identifier: "n1")      // String
/// let order = try garage.retrieve(Order.self, identifier: orderID)  // UUID
/// ```
///
/// `String`, `Substring`, `UUID` and the integer types conform: the identifier is the string,
/// the `uuidString`, or the number's description, as for an `Identifiable` object's `id`. An ID
/// type of your own that is `LosslessStringConvertible` (its `description` is the identifier)
/// conforms with an empty extension:
///
/// ```swift
/// struct NoteID: LosslessStringConvertible, Hashable, Codable { … }
/// extension NoteID: GarageIdentifier {}
/// ```
///
/// Only these compile, so passing an object where its identifier belongs
/// (`retrieve(Note.self, identifier: note)`) is caught by the compiler.
public protocol GarageIdentifier: SendableMetatype {}

extension String: GarageIdentifier {}
extension Substring: GarageIdentifier {}
extension UUID: GarageIdentifier {}
extension Int: GarageIdentifier {}
extension Int8: GarageIdentifier {}
extension Int16: GarageIdentifier {}
extension Int32: GarageIdentifier {}
extension Int64: GarageIdentifier {}
extension UInt: GarageIdentifier {}
extension UInt8: GarageIdentifier {}
extension UInt16: GarageIdentifier {}
extension UInt32: GarageIdentifier {}
extension UInt64: GarageIdentifier {}
