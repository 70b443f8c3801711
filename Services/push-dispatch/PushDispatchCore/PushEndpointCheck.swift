import NotifyOutbound

extension OutboundHTTPClient {
    /// The verdict of a push to an endpoint outside `service`'s hosts (a WNS channel or Web Push endpoint registered
    /// before the rule, or off the operator's allowance): never sent, and the subscription kept for the operator to see.
    /// Nil when the endpoint may be pushed to.
    func refusal(ofPushEndpoint endpoint: String, at service: PushServiceHosts.Service) -> PushVerdict? {
        do {
            try PushServiceHosts.check(endpoint, for: service, allowance: policy.allowance)
            return nil
        } catch {
            return PushVerdict(action: .fail, status: nil, reason: "not sent: \(error)")
        }
    }
}
