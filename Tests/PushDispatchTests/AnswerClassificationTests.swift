import Foundation
import Testing

@testable import PushDispatchCore
import NotifyAPNs

/// Every provider error the issue names, and the action dispatch takes for it.
@Suite("Provider answers → actions")
struct AnswerClassificationTests {
    @Test("APNs", arguments: [
        (200, "", PushAction.accepted),
        (410, "Unregistered", .tokenInvalid(since: nil)),
        (410, "ExpiredToken", .tokenInvalid(since: nil)),
        (400, "BadDeviceToken", .tokenInvalid(since: nil)),
        (400, "DeviceTokenNotForTopic", .tokenInvalid(since: nil)),
        (403, "InvalidProviderToken", .credentials),
        (403, "ExpiredProviderToken", .credentials),
        (429, "TooManyRequests", .retry(after: 7)),
        (500, "InternalServerError", .retry(after: 7)),
        (503, "ServiceUnavailable", .retry(after: 7)),
        (400, "BadExpirationDate", .fail),
        (400, "BadCollapseId", .fail),
        (413, "PayloadTooLarge", .fail),
        (400, "MissingTopic", .fail),
    ])
    func apns(status: Int, reason: String, expected: PushAction) {
        let answer: APNsClient.Answer = status == 200
            ? .accepted : .rejected(status: status, reason: reason, retryAfter: 7, invalidSince: nil)
        #expect(APNsAnswerClassifier.classify(answer) == expected)
    }

    @Test("FCM HTTP v1", arguments: [
        (404, "UNREGISTERED", PushAction.tokenInvalid(since: nil)),
        (403, "SENDER_ID_MISMATCH", .tokenInvalid(since: nil)),
        (400, "INVALID_ARGUMENT", .fail),
        (429, "QUOTA_EXCEEDED", .retry(after: 60)),
        (503, "UNAVAILABLE", .retry(after: 7)),
        (500, "INTERNAL", .retry(after: 7)),
        (401, "UNAUTHENTICATED", .credentials),
        (403, "PERMISSION_DENIED", .credentials),
    ])
    func fcm(status: Int, reason: String, expected: PushAction) {
        #expect(FCMAnswerClassifier.classify(.rejected(status: status, reason: reason, retryAfter: 7)) == expected)
    }

    @Test("WNS", arguments: [
        (404, PushAction.tokenInvalid(since: nil)), (410, .tokenInvalid(since: nil)),
        (406, .retry(after: 7)), (429, .retry(after: 7)), (503, .retry(after: 7)),
        (401, .credentials), (400, .fail), (413, .fail),
    ])
    func wns(status: Int, expected: PushAction) {
        #expect(WNSAnswerClassifier.classify(.rejected(status: status, reason: "", retryAfter: 7)) == expected)
    }

    @Test("Web Push", arguments: [
        (404, PushAction.tokenInvalid(since: nil)), (410, .tokenInvalid(since: nil)),
        (429, .retry(after: 7)), (503, .retry(after: 7)),
        (401, .credentials), (403, .credentials), (400, .fail), (413, .fail),
    ])
    func webPush(status: Int, expected: PushAction) {
        #expect(WebPushAnswerClassifier.classify(.rejected(status: status, reason: "", retryAfter: 7)) == expected)
    }

    @Test("no answer at all (refused, reset, timed out) is retried, for every provider")
    func unreachable() {
        #expect(APNsAnswerClassifier.classify(.unreachable("reset")) == .retry(after: nil))
        #expect(FCMAnswerClassifier.classify(.unreachable("reset")) == .retry(after: nil))
        #expect(WNSAnswerClassifier.classify(.unreachable("reset")) == .retry(after: nil))
        #expect(WebPushAnswerClassifier.classify(.unreachable("reset")) == .retry(after: nil))
    }
}
