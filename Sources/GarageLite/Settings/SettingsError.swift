import Foundation
import GarageLiteCore

/// The errors of settings that the garage's own errors don't cover: each names the key.
///
/// ```swift
/// do {
///     let volume = try garage.value(for: Keys.volume)
/// } catch let error as SettingsError {
///     print(error)    // the value stored under "player:volume" is not a Double: …
/// }
/// ```
///
/// A setting whose stored value can't be read is an error, never its default: the default
/// would hide the problem, and the next ``Garage/set(_:for:)-5ws8a`` would overwrite the value.
public enum SettingsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The value stored under the key `key` can't be read as `valueType`: its JSON no longer
    /// matches the type (the key's value type changed, or another key with the same id stored
    /// another type), or the key's transformer refused it. `reason` says why.
    ///
    /// Read it as what it is with a key of the old type, move it with a
    /// ``SettingsMigration``, or overwrite it with ``Garage/set(_:for:)-5ws8a``.
    case valueMismatch(key: String, valueType: String, reason: String)

    /// A ``SettingsMigration`` whose old id is its new key's id: a value can't be moved onto
    /// itself (it would be converted again at every launch). Give the new key another id.
    case migrationOntoItself(key: String)

    /// What went wrong, naming the key.
    public var description: String {
        switch self {
        case let .valueMismatch(key, valueType, reason):
            "The value stored under the settings key \"\(key)\" can't be read as \(valueType): \(reason)"
        case let .migrationOntoItself(key):
            "A settings migration moves the value of \"\(key)\" onto itself; give the new key another id"
        }
    }
}

extension SettingsError: LocalizedError {
    /// ``description``.
    public var errorDescription: String? { description }
}

extension SettingsError {
    /// The value under `key` is not a `Value`: `error`, a decoding or transformer error, says
    /// why.
    static func mismatch<Value>(_ key: String, _ type: Value.Type, _ error: any Error) -> SettingsError {
        mismatch(key, Identity.displayName(type), error)
    }

    /// The value under `key` is not a `valueType` (its name): `error` says why.
    static func mismatch(_ key: String, _ valueType: String, _ error: any Error) -> SettingsError {
        let reason: String
        switch error {
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
             DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            // Without what the garage says of objects (the row's name, "park it again"): a
            // setting is read, set and migrated through its key.
            var description = context.debugDescription.replacingOccurrences(of: " " + DecodingError.whatToDo, with: "")
            let rowPrefix = "\(storedSettingTypeName)(\(key)): "
            if description.hasPrefix(rowPrefix) { description.removeFirst(rowPrefix.count) }
            reason = description + (path.count > 1 ? " (at \(path.dropFirst().joined(separator: ".")))" : "")
        default:
            reason = String(describing: error)
        }
        return .valueMismatch(key: key, valueType: valueType, reason: reason)
    }
}
