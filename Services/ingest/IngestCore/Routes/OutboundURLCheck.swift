import NotifyModels
import NotifyOutbound

/// The outbound address policy at registration: a URL the service will call on an app's or a device's behalf is
/// refused (400 naming its field) when the policy would refuse it at connection time, so the mistake or the attack
/// is seen when it is made. The connections are checked again (push-dispatch, the poller).
struct OutboundURLCheck: Sendable {
    let policy: OutboundPolicy

    /// Resolves `url`'s host and refuses it unless an address it resolves to may be called.
    func requireCallable(_ url: String, field: String) async throws(APIFailure) {
        do {
            _ = try await policy.destination(of: url)
        } catch {
            throw APIFailure(ValidationError.invalid(field, "\(field) is refused: \(error)"))
        }
    }

    /// A WNS channel URI or Web Push endpoint: only on its push services' hosts (or a host the operator admits). Its
    /// address is checked at each push: the push services' names are theirs, so resolving them here adds nothing.
    func requirePushEndpoint(_ url: String, platform: Platform, field: String) throws(APIFailure) {
        let service: PushServiceHosts.Service
        switch platform {
        case .wns: service = .wns
        case .webpush: service = .webPush
        case .apns, .apnsVoip, .fcm, .polling: return
        }
        do {
            try PushServiceHosts.check(url, for: service, allowance: policy.allowance)
        } catch {
            throw APIFailure(ValidationError.invalid(field, "\(field) is refused: \(error)"))
        }
    }

    /// The endpoint overrides in provider credentials (APNs and FCM endpoints, FCM's and WNS's token URLs).
    func requireCallableEndpoints(of credentials: ProviderCredentials) async throws(APIFailure) {
        switch credentials {
        case .apns(let apns):
            if let endpoint = apns.endpoint { try await requireCallable(endpoint, field: "endpoint") }
        case .fcm(let fcm):
            if let endpoint = fcm.endpoint { try await requireCallable(endpoint, field: "endpoint") }
            try await requireCallable(fcm.serviceAccount.tokenUri, field: "serviceAccount.token_uri")
        case .wns(let wns):
            if let tokenURL = wns.tokenURL { try await requireCallable(tokenURL, field: "tokenURL") }
        case .webpush:
            return
        }
    }
}
