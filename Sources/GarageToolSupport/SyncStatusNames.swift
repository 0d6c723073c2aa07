import GarageLite

// The names the garage tool gives sync statuses, in its output and its options.
extension SyncStatus {
    /// The status's name: `undetermined`, `notSynced`, `syncing`, `synced`.
    package var name: String {
        switch self {
        case .undetermined: "undetermined"
        case .notSynced: "notSynced"
        case .syncing: "syncing"
        case .synced: "synced"
        }
    }

    /// The status named `name` (`notSynced`, `not-synced` or `not_synced`, in any case), or `nil`.
    package init?(name: String) {
        let folded = name.lowercased().filter { $0 != "-" && $0 != "_" }
        guard let status = SyncStatus.allCases.first(where: { $0.name.lowercased() == folded }) else { return nil }
        self = status
    }
}
