#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address as its bytes in network order (4 or 16 of them).
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// The address of `text` (dotted IPv4, or IPv6 with or without brackets); nil when it is not an address.
    public init?(_ text: some StringProtocol) {
        var literal = String(text)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// An address of 4 or 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// The text a socket API takes: dotted IPv4, or IPv6 without brackets.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { address in
            inet_ntop(family, address.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the first `length` bits of this address are those of `prefix` (an address of the same family).
    func hasPrefix(_ prefix: IPAddress, length: Int) -> Bool {
        guard prefix.bytes.count == bytes.count, length <= bytes.count * 8 else { return false }
        var remaining = length
        for index in bytes.indices where remaining > 0 {
            let bits = min(remaining, 8)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != prefix.bytes[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// The IPv4 address an IPv6 address carries, where the IPv6 form is only a way of writing one: IPv4-mapped
    /// (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64's well-known prefix (64:ff9b::/96) and 6to4 (2002::/16).
    var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return IPAddress(bytes: Array(bytes[12..<16])) }
        // ::a.b.c.d, except :: and ::1, which are IPv6's own.
        if bytes[0..<12].allSatisfy({ $0 == 0 }) && !(bytes[12..<15].allSatisfy { $0 == 0 } && bytes[15] <= 1) {
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return IPAddress(bytes: Array(bytes[12..<16])) }
        if bytes[0] == 0x20 && bytes[1] == 0x02 { return IPAddress(bytes: Array(bytes[2..<6])) }
        return nil
    }
}
