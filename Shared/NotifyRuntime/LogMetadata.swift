import Foundation
import Logging
import NotifyModels

extension Logger.MetadataValue {
    /// An id as the API answers it (lowercase 8-4-4-4-12): a notification's `notificationId` reads the same in the
    /// four services' logs as in the API and in pushes.
    public static func id(_ id: UUID) -> Self {
        .string(id.lowercasedString)
    }
}

extension StorageCommand {
    /// The notification the command publishes or changes, if it concerns one.
    public var notificationId: UUID? {
        switch action {
        case .publishNotification(let notification): notification.notificationId
        case .publishBroadcast(let broadcast): broadcast.notificationId
        case .changeNotificationState(let change): change.notificationId
        default: nil
        }
    }

    /// `commandId`, and `notificationId` where the command concerns one notification.
    public var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["commandId": .id(commandId)]
        if let notificationId { metadata["notificationId"] = .id(notificationId) }
        return metadata
    }
}
