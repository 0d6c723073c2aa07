import Foundation
import GarageLiteCore

extension GarageError: CustomNSError {
    /// GarageStorage's error domain, `"GarageStorage"`: an app that checks the domain of the
    /// errors it gets, as GarageStorage's guide says, keeps working.
    public static var errorDomain: String { "GarageStorage" }

    /// GarageStorage's four cases have its codes (0 to 3, in its order); GarageLite's own
    /// cases count from 100.
    public var errorCode: Int {
        switch self {
        case .failedToRetrieveObject: return 0
        case .storageDataIsNil: return 1
        case .missingConformance: return 2
        case .unsupportedIDConformance: return 3
        case .cannotOpenStore: return 100
        case .notAGarageStore: return 101
        case .newerFormatVersion: return 102
        case .missingEncryptionDelegate: return 103
        case .corruptData: return 104
        case .referenceCycle: return 105
        case .storeBusy: return 106
        case .reentrantCall: return 107
        case .storageFailure: return 108
        case .readOnlyStore: return 109
        case .storeFull: return 110
        case .damagedStore: return 111
        case .decryptionFailed: return 112
        case .invalidIdentifier: return 113
        case .encryptionFailed: return 114
        case .collectionNotAnObject: return 115
        case .typeNameCollision: return 116
        case .staleObject: return 117
        case .ambiguousMigration: return 118
        case .deleteDenied: return 119
        case .cannotNullify: return 120
        case .contentIdentifierExpected: return 121
        case .notAGarageStorageStore: return 122
        case .transactionMisuse: return 123
        case .unregisteredType: return 124
        case .cannotRegister: return 125
        case .storedAsItsClass: return 126
        case .invalidEncryptionKey: return 127
        case .unencryptedRow: return 128
        case .encryptionKeyRequired: return 129
        case .wrongEncryptionKey: return 130
        case .encryptionLimitReached: return 131
        case .staleEncryptionKey: return 132
        case .keyChangeUnfinished: return 133
        case .invalidQuery: return 134
        case .connectionLost: return 135
        case .storeLayoutChanged: return 136
        }
    }

    /// The description (GarageStorage's, for its cases) under `NSLocalizedDescriptionKey`,
    /// and the recovery suggestion, when there is one, under
    /// `NSLocalizedRecoverySuggestionErrorKey`.
    public var errorUserInfo: [String: Any] {
        var userInfo: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let recoverySuggestion { userInfo[NSLocalizedRecoverySuggestionErrorKey] = recoverySuggestion }
        return userInfo
    }
}
