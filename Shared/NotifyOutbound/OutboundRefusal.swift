/// Why the service will not call a URL on a tenant's behalf. Its description names the host and the rule, never the
/// URL's path, query or credentials.
public struct OutboundRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Not an http(s) URL with a host.
        case unsupportedURL
        /// The host has no address.
        case unresolvable
        /// The host is, or resolves only to, an address the policy refuses (loopback, private, metadata, ...).
        case forbiddenAddress
        /// A push endpoint outside the push services (WNS channels, Web Push endpoints).
        case notAPushService
    }

    public var code: Code
    public var host: String
    /// The class of the refused address, for `.forbiddenAddress`.
    public var addressClass: AddressClass?
    /// For `.notAPushService`: the services that are admitted, in words.
    public var expected: String?

    public var description: String {
        switch code {
        case .unsupportedURL: return "not an http or https URL with a host"
        case .unresolvable: return "the host \(host) has no address"
        case .forbiddenAddress:
            let kind = addressClass.map { $0.inWords } ?? "not a public address"
            return "the host \(host) is \(kind), which the service does not call on an app's behalf"
        case .notAPushService: return "the host \(host) is not \(expected ?? "a push service")"
        }
    }
}

extension AddressClass {
    /// "a loopback address", "a private (RFC 1918) address", ...
    public var inWords: String {
        switch self {
        case .global: return "a public address"
        case .loopback: return "a loopback address"
        case .private: return "a private (RFC 1918) address"
        case .linkLocal: return "a link-local address"
        case .sharedAddressSpace: return "a carrier-grade NAT (100.64/10) address"
        case .uniqueLocal: return "a unique-local IPv6 address"
        case .multicast: return "a multicast address"
        case .unspecified: return "an unspecified address"
        case .cloudMetadata: return "a cloud metadata address"
        case .reserved: return "a reserved address"
        }
    }
}
