import NotifyOutbound

extension EnvironmentVariable {
    public static let outboundAllow = EnvironmentVariable(
        "NOTIFY_OUTBOUND_ALLOW",
        "destinations beyond the public internet the service may call on an app's behalf (webhooks, poll sources, push endpoints, provider endpoint overrides), HOST:PORT separated by commas; HOST a name, an IPv4 address or range, or an IPv6 one in brackets, PORT a port or *; e.g. the provider sandbox's localhost:21444. Unset: public addresses only")
}

extension ServiceEnvironment {
    /// The outbound policy with NOTIFY_OUTBOUND_ALLOW's allowance.
    public func outboundPolicy() throws(ConfigurationError) -> OutboundPolicy {
        guard let text = string(.outboundAllow) else { return OutboundPolicy() }
        do {
            return OutboundPolicy(allowance: try OutboundAllowance(parsing: text))
        } catch {
            throw ConfigurationError("NOTIFY_OUTBOUND_ALLOW: \(error)")
        }
    }
}
