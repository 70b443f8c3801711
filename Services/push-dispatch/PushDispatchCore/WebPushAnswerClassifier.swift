/// Maps each push service answer (RFC 8030, VAPID RFC 8292) to what dispatch does about it.
enum WebPushAnswerClassifier {
    static func classify(_ answer: ProviderAnswer) -> PushAction {
        switch answer {
        case .accepted:
            return .accepted
        case .unreachable:
            return .retry(after: nil)
        case .notAllowed:
            return .fail
        case .rejected(let status, _, let retryAfter):
            switch status {
            case 404, 410: return .tokenInvalid(since: nil)
            case 401, 403: return .credentials
            case 429, 500...599: return .retry(after: retryAfter)
            default: return .fail
            }
        }
    }
}
