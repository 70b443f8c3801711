import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns a host name into its addresses.
public protocol HostResolving: Sendable {
    /// The addresses of `host`, in the order the system prefers; empty when it has none.
    func addresses(of host: String) async -> [IPAddress]
}

/// The system's resolver (`getaddrinfo`: /etc/hosts, then DNS), called on NIO's blocking-I/O thread pool so that a
/// slow lookup never holds a thread of the cooperative pool.
public struct SystemHostResolver: HostResolving {
    public init() {}

    public func addresses(of host: String) async -> [IPAddress] {
        (try? await NIOThreadPool.singleton.runIfActive { Self.lookUp(host) }) ?? []
    }

    private static func lookUp(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            next = info.pointee.ai_next
            guard let socketAddress = info.pointee.ai_addr else { continue }
            let address: IPAddress?
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafeBytes(of: v4.pointee.sin_addr) { IPAddress(bytes: Array($0)) }
                }
            case AF_INET6:
                address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafeBytes(of: v6.pointee.sin6_addr) { IPAddress(bytes: Array($0)) }
                }
            default:
                address = nil
            }
            if let address, !addresses.contains(address) { addresses.append(address) }
        }
        return addresses
    }
}
