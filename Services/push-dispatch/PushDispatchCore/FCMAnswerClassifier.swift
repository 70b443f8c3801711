import NotifyModels

/// Maps each FCM HTTP v1 answer to what dispatch does about it (Firebase's "FCM error codes").
enum FCMAnswerClassifier {
    /// FCM asks senders over quota to wait at least a minute.
    static let minimumQuotaBackoff = 60

    static func classify(_ answer: ProviderAnswer) -> PushAction {
        switch answer {
        case .accepted:
            return .accepted
        case .unreachable:
            return .retry(after: nil)
        case .notAllowed:
            return .fail
        case .rejected(let status, let reason, let retryAfter):
            switch (status, reason) {
            case (404, _), (_, "UNREGISTERED"), (403, "SENDER_ID_MISMATCH"):
                return .tokenInvalid(since: nil)
            case (429, _), (_, "QUOTA_EXCEEDED"):
                return .retry(after: max(retryAfter ?? 0, minimumQuotaBackoff))
            case (500...599, _), (_, "UNAVAILABLE"), (_, "INTERNAL"):
                return .retry(after: retryAfter)
            case (401, _), (403, _):
                return .credentials
            default:
                return .fail
            }
        }
    }
}
