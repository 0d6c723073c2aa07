import Foundation
import GarageLiteCore

extension Garage {
    /// Whose rules a garage follows where GarageLite's differ from GarageStorage's in what an
    /// app's own code relies on: ``garageLite`` (the default), or ``garageStorage``, for an app
    /// that changed only its import.
    ///
    /// ```swift
    /// let garage = try Garage(named: "MyGarage")
    /// garage.compatibility = .garageStorage     // GarageStorage's rules for .syncing and delete
    /// ```
    ///
    /// Everything else is GarageLite's either way: edited `.synced` objects become `.notSynced`,
    /// graphs are written in one transaction, `Revisioned` objects are checked, and so on (see
    /// the article "Migrating from GarageStorage", its differences).
    public struct Compatibility: Sendable, Hashable, CustomStringConvertible {
        /// Whether an object parked saying `.syncing` is stored `.syncing` whether a sync job's
        /// claim holds its row or not, as GarageStorage stored it: an app's own job marks objects
        /// `.syncing` by parking them (or with `setSyncStatus`), and finds them again with
        /// `retrieveAll(withStatus: .syncing)`.
        ///
        /// Without it (GarageLite's rule), such an object is stored `.notSynced` unless a claim
        /// holds its row: a copy retrieved during a claim and parked after it ended would
        /// otherwise stay `.syncing` forever, and its edit never be uploaded.
        public var keepsParkedSyncingStatus: Bool

        /// Whether deleting an object others reference leaves the references to it dangling,
        /// as GarageStorage's delete did: the calls that name no rule delete with
        /// ``DeleteRule/rowOnly`` instead of ``DeleteRule/deny`` (a ``Garage/deleteRule`` the
        /// app sets still wins).
        public var leavesReferencesDangling: Bool

        /// Sets both, or neither.
        public init(keepsParkedSyncingStatus: Bool, leavesReferencesDangling: Bool) {
            self.keepsParkedSyncingStatus = keepsParkedSyncingStatus
            self.leavesReferencesDangling = leavesReferencesDangling
        }

        /// GarageLite's rules: `.syncing` without a claim is stored `.notSynced`, and a delete
        /// refuses an object others reference (``DeleteRule/deny``). The default.
        public static let garageLite = Compatibility(keepsParkedSyncingStatus: false, leavesReferencesDangling: false)

        /// GarageStorage's rules, for an app that changed only its import: an object parked
        /// saying `.syncing` stays `.syncing`, and deleting an object others reference deletes
        /// its row alone (``DeleteRule/rowOnly``), leaving their references dangling.
        public static let garageStorage = Compatibility(keepsParkedSyncingStatus: true, leavesReferencesDangling: true)

        /// `garageLite`, `garageStorage`, or the two settings.
        public var description: String {
            switch self {
            case .garageLite: return "garageLite"
            case .garageStorage: return "garageStorage"
            default:
                return "Compatibility(keepsParkedSyncingStatus: \(keepsParkedSyncingStatus), "
                    + "leavesReferencesDangling: \(leavesReferencesDangling))"
            }
        }
    }

    /// Whose rules the garage follows where GarageLite's differ from GarageStorage's:
    /// ``Compatibility/garageLite`` by default. A GarageStorage app that changed only its import
    /// sets ``Compatibility/garageStorage`` once, when it opens the garage:
    ///
    /// ```swift
    /// let garage = try Garage(named: "MyGarage")
    /// garage.compatibility = .garageStorage
    /// ```
    ///
    /// It applies to the calls made after it is set, from any thread.
    public var compatibility: Compatibility {
        get { state.read { $0.compatibility } }
        set { state.write { $0.compatibility = newValue } }
    }
}
