import Foundation
import NotifyAPNs
import NotifyModels

/// Maps each APNs answer to what dispatch does about it (Apple's "Handling notification responses").
enum APNsAnswerClassifier {
    static func classify(_ answer: APNsClient.Answer) -> PushAction {
        switch answer {
        case .accepted:
            return .accepted
        case .unreachable:
            return .retry(after: nil)
        case .rejected(let status, let reason, let retryAfter, let invalidSince):
            switch (status, reason) {
            case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
                return .tokenInvalid(since: invalidSince)
            case (403, "InvalidProviderToken"), (403, "ExpiredProviderToken"), (403, "MissingProviderToken"):
                return .credentials
            case (429, _), (500...599, _):
                return .retry(after: retryAfter)
            default:
                return .fail
            }
        }
    }
}
