/// What an address is for, as the outbound policy sees it: only `.global` addresses are reached on a tenant's
/// behalf unless the operator admits others (`OutboundAllowance`).
public enum AddressClass: String, Sendable, CaseIterable {
    /// A public internet address.
    case global
    /// 127/8, ::1.
    case loopback
    /// RFC 1918: 10/8, 172.16/12, 192.168/16.
    case `private`
    /// 169.254/16, fe80::/10.
    case linkLocal
    /// RFC 6598's shared address space (carrier-grade NAT), 100.64/10.
    case sharedAddressSpace
    /// fc00::/7 (and the deprecated site-local fec0::/10).
    case uniqueLocal
    /// 224/4, ff00::/8.
    case multicast
    /// 0/8, ::.
    case unspecified
    /// The instance metadata services of the cloud providers (AWS, GCP, Azure, Oracle, Alibaba, ECS).
    case cloudMetadata
    /// Ranges kept for other uses: broadcast, 240/4, documentation, benchmarking, IETF protocol assignments, discard.
    case reserved

    /// The class of `address`; an IPv6 form of an IPv4 address (mapped, compatible, NAT64, 6to4) is its IPv4's.
    public init(_ address: IPAddress) {
        if let v4 = address.embeddedIPv4 {
            self = Self(v4)
            return
        }
        for (prefix, length, kind) in address.isIPv4 ? Self.ipv4Ranges : Self.ipv6Ranges where address.hasPrefix(prefix, length: length) {
            self = kind
            return
        }
        self = .global
    }

    private typealias Range = (prefix: IPAddress, length: Int, kind: AddressClass)

    private static func range(_ prefix: String, _ length: Int, _ kind: AddressClass) -> Range {
        (IPAddress(prefix)!, length, kind)
    }

    /// The ranges in the order they are tried: the metadata addresses before the ranges that hold them.
    private static let ipv4Ranges: [Range] = [
        range("169.254.169.254", 32, .cloudMetadata), range("169.254.170.2", 32, .cloudMetadata),
        range("100.100.100.200", 32, .cloudMetadata), range("192.0.0.192", 32, .cloudMetadata),
        range("0.0.0.0", 8, .unspecified), range("127.0.0.0", 8, .loopback),
        range("10.0.0.0", 8, .private), range("172.16.0.0", 12, .private), range("192.168.0.0", 16, .private),
        range("169.254.0.0", 16, .linkLocal), range("100.64.0.0", 10, .sharedAddressSpace), range("224.0.0.0", 4, .multicast),
        range("255.255.255.255", 32, .reserved), range("240.0.0.0", 4, .reserved), range("192.0.0.0", 24, .reserved),
        range("192.0.2.0", 24, .reserved), range("198.51.100.0", 24, .reserved), range("203.0.113.0", 24, .reserved),
        range("198.18.0.0", 15, .reserved),
    ]

    private static let ipv6Ranges: [Range] = [
        range("fd00:ec2::254", 128, .cloudMetadata),
        range("::", 128, .unspecified), range("::1", 128, .loopback),
        range("fe80::", 10, .linkLocal), range("fc00::", 7, .uniqueLocal), range("fec0::", 10, .uniqueLocal), range("ff00::", 8, .multicast),
        range("2001:db8::", 32, .reserved), range("100::", 64, .reserved),
    ]
}
