import Foundation
import GarageLiteCore

/// What a commit did to a setting: ``Garage/updates(for:)`` and ``Persister/updates``.
///
/// ```swift
/// case .persisted(let volume): player.volume = volume
/// case .removed: player.volume = Player.volume.defaultValue
/// ```
public enum SettingsUpdate<Value: Sendable>: Sendable {
    /// The value now stored (after the key's transform).
    case persisted(Value)
    /// The stored value was removed: the key reads its default.
    case removed
}

extension SettingsUpdate: Equatable where Value: Equatable {}
extension SettingsUpdate: Hashable where Value: Hashable {}

/// The updates of one setting, after each commit that changed it: see
/// ``Garage/updates(for:)``.
public struct SettingsUpdates<Value: Sendable>: AsyncSequence, Sendable {
    /// What a commit did to the setting.
    public typealias Element = SettingsUpdate<Value>
    /// What iterating throws: ``SettingsError/valueMismatch(key:valueType:reason:)``, and the
    /// errors of retrieving the setting's row.
    public typealias Failure = any Error

    private let iterator: @Sendable () -> AsyncIterator

    /// The updates of `setting`'s row, as `changes` reports its values.
    init<S: StoredSettingValue>(_ changes: ObjectChanges<S>, _ setting: SettingCoding<Value>) {
        iterator = {
            let source = SettingUpdateSource(changes.makeAsyncIterator(), setting)
            return AsyncIterator { actor in try await source.next(isolation: actor) }
        }
    }

    /// A sequence that throws `error`, why it could not observe the setting.
    init(failure error: any Error) {
        iterator = {
            var failed = false
            return AsyncIterator { _ in
                if failed { return nil }
                failed = true
                throw error
            }
        }
    }

    /// An iterator over the updates.
    public func makeAsyncIterator() -> AsyncIterator {
        iterator()
    }

    /// Gives the updates of a setting, each read when it is asked for.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let nextUpdate: (isolated (any Actor)?) async throws -> SettingsUpdate<Value>?

        init(_ nextUpdate: @escaping (isolated (any Actor)?) async throws -> SettingsUpdate<Value>?) {
            self.nextUpdate = nextUpdate
        }

        /// What the next commit that changed the setting did, or `nil` when the sequence ends;
        /// the value is read on the actor that iterates (`for try await` calls this one).
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> SettingsUpdate<Value>? {
            try await nextUpdate(actor)
        }

        /// What the next commit that changed the setting did (see ``next(isolation:)``).
        public mutating func next() async throws -> SettingsUpdate<Value>? {
            try await next(isolation: nil)
        }
    }
}

/// The values of a setting's row, as updates of its value: the iterator of
/// ``ObjectChanges`` that ``SettingsUpdates`` hides behind a closure, since the type of the
/// row is the key's secret.
private final class SettingUpdateSource<S: StoredSettingValue, Value: Sendable> {
    private var rows: ObjectChanges<S>.AsyncIterator
    private let setting: SettingCoding<Value>

    init(_ rows: ObjectChanges<S>.AsyncIterator, _ setting: SettingCoding<Value>) {
        self.rows = rows
        self.setting = setting
    }

    func next(isolation actor: isolated (any Actor)?) async throws -> SettingsUpdate<Value>? {
        let next: S??
        do {
            next = try await rows.next(isolation: actor)
        } catch let error as DecodingError {
            throw SettingsError.mismatch(setting.id, Value.self, error)
        }
        guard let next else { return nil }
        guard let row = next else { return .removed }
        return .persisted(try setting.value(of: row))
    }
}
