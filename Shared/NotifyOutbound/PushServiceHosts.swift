/// The hosts push endpoints may name: a device registers a URL (a WNS channel URI, a Web Push endpoint) that the
/// service then POSTs to with the app's credentials, so only the push services' own hosts are taken, plus the hosts
/// the operator admits by name and port (`OutboundAllowance`, for the provider sandbox and private deployments).
public enum PushServiceHosts {
    /// A kind of push endpoint a device registers.
    public enum Service: Sendable {
        case wns
        case webPush

        /// Exact host names and, starting with a dot, domains whose subdomains are taken; all on port 443.
        public var hosts: [String] {
            switch self {
            // Microsoft: "only send notifications to channel URIs on notify.windows.com".
            case .wns: return [".notify.windows.com"]
            // Chrome and Chromium-based browsers (FCM, and GCM's older endpoints), Firefox (Mozilla's autopush),
            // Safari (Apple), Edge (WNS).
            case .webPush:
                return ["fcm.googleapis.com", "android.googleapis.com", ".push.services.mozilla.com", ".push.apple.com", ".notify.windows.com"]
            }
        }

        var inWords: String {
            switch self {
            case .wns: return "a WNS host (*.notify.windows.com)"
            case .webPush: return "a browser push service (FCM, Mozilla, Apple or Microsoft)"
            }
        }
    }

    /// Checks that `url` is an https URL on one of `service`'s hosts (port 443), or on a host the operator admits by
    /// name and port.
    public static func check(_ url: String, for service: Service, allowance: OutboundAllowance) throws(OutboundRefusal) {
        let (host, port, https) = try OutboundPolicy.hostAndPort(of: url)
        guard https else { throw OutboundRefusal(code: .unsupportedURL, host: host) }
        if allowance.admits(hostName: host, port: port) { return }
        let listed = service.hosts.contains { pattern in
            pattern.hasPrefix(".") ? host.hasSuffix(pattern) && host.count > pattern.count : host == pattern
        }
        guard listed, port == 443 else { throw OutboundRefusal(code: .notAPushService, host: host, expected: service.inWords) }
    }
}
