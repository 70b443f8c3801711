/// Maps each WNS answer to what dispatch does about it ("Push notification service request and response headers").
enum WNSAnswerClassifier {
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
            case 401: return .credentials
            case 406, 429, 500...599: return .retry(after: retryAfter)
            default: return .fail
            }
        }
    }
}
