import Foundation

/// Where a URL's request goes once the policy checked it: the host as the URL names it (for TLS and the Host header)
/// and the one address that was checked, which is the address connected to (no second lookup, so a name that
/// resolves elsewhere a moment later, DNS rebinding, changes nothing).
public struct OutboundDestination: Sendable, Hashable {
    /// Lowercased, without brackets or a trailing dot.
    public let host: String
    public let port: Int
    public let address: IPAddress

    /// Whether the URL named an address rather than a name.
    public var hostIsAddress: Bool { IPAddress(host) != nil }

    /// Letters, digits, hyphens, underscores and dots: what a host name (not an address) may hold.
    static func isHostName(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 253 && text.utf8.allSatisfy { byte in
            (byte >= 97 && byte <= 122) || (byte >= 48 && byte <= 57) || byte == 45 || byte == 46 || byte == 95
        }
    }
}

/// The one outbound address policy: every URL the service calls on a tenant's behalf (webhooks, poll sources, Web
/// Push and WNS endpoints, provider endpoint overrides, identity providers' keys) is checked here, when it is
/// registered and again at every connection. Only public addresses are reached, plus what the operator admits by host
/// and port (`OutboundAllowance`); loopback, private, link-local, carrier-grade NAT, unique-local, multicast,
/// unspecified, reserved and cloud metadata addresses are refused, in IPv4 and in any IPv6 form of them.
public struct OutboundPolicy: Sendable {
    public let allowance: OutboundAllowance
    private let resolver: any HostResolving

    public init(allowance: OutboundAllowance = .none, resolver: any HostResolving = SystemHostResolver()) {
        self.allowance = allowance
        self.resolver = resolver
    }

    /// The host and port of an http or https URL (the scheme's port when none is written).
    public static func hostAndPort(of url: String) throws(OutboundRefusal) -> (host: String, port: Int, https: Bool) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              var host = components.host, !host.isEmpty
        else {
            throw OutboundRefusal(code: .unsupportedURL, host: "")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        host = host.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        guard (1...65_535).contains(port), IPAddress(host) != nil || OutboundDestination.isHostName(host) else {
            throw OutboundRefusal(code: .unsupportedURL, host: host)
        }
        return (host, port, scheme == "https")
    }

    /// Checks `url` and answers the address to connect to.
    public func destination(of url: String) async throws(OutboundRefusal) -> OutboundDestination {
        let (host, port, _) = try Self.hostAndPort(of: url)
        return try await destination(host: host, port: port)
    }

    /// Checks `host` (lowercased, no brackets) at `port` and answers the address to connect to: an address the URL
    /// names must be public or admitted; a name admitted by name connects to its first address; any other name to its
    /// first address that is public or admitted, and is refused when it has none.
    public func destination(host: String, port: Int) async throws(OutboundRefusal) -> OutboundDestination {
        if let address = IPAddress(host) {
            try check(address, host: host, port: port)
            return OutboundDestination(host: host, port: port, address: address)
        }
        let addresses = await resolver.addresses(of: host)
        guard let first = addresses.first else { throw OutboundRefusal(code: .unresolvable, host: host) }
        if allowance.admits(hostName: host, port: port) { return OutboundDestination(host: host, port: port, address: first) }
        guard let usable = addresses.first(where: { admits($0, port: port) }) else {
            throw OutboundRefusal(code: .forbiddenAddress, host: host, addressClass: AddressClass(first))
        }
        return OutboundDestination(host: host, port: port, address: usable)
    }

    /// Whether the service may connect to `address` at `port`.
    public func admits(_ address: IPAddress, port: Int) -> Bool {
        AddressClass(address) == .global || allowance.admits(address, port: port)
    }

    private func check(_ address: IPAddress, host: String, port: Int) throws(OutboundRefusal) {
        guard admits(address, port: port) else {
            throw OutboundRefusal(code: .forbiddenAddress, host: host, addressClass: AddressClass(address))
        }
    }
}
