import Foundation

/// Where the pushes of one `APNsCredentials.baseURL` go: the host and port to connect to, the TLS server name,
/// and the `:authority` and path prefix of every request (worked out once per key, not per push).
public struct APNsTransportEndpoint: Sendable, CustomStringConvertible {
    public let host: String
    public let port: Int
    /// `host` or `host:port`, as written in the base URL.
    public let authority: String
    /// The base URL's path followed by `/3/device/`.
    public let devicePathPrefix: String

    public init(baseURL: String) throws(APNsTransportError) {
        guard let components = URLComponents(string: baseURL), components.scheme?.lowercased() == "https",
            let rawHost = components.host, !rawHost.isEmpty
        else { throw .invalidEndpoint(baseURL) }
        let host = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        let authorityHost = host.contains(":") ? "[\(host)]" : host
        self.host = host
        self.port = components.port ?? 443
        self.authority = components.port.map { "\(authorityHost):\($0)" } ?? authorityHost
        let basePath = components.percentEncodedPath.hasSuffix("/") ? String(components.percentEncodedPath.dropLast()) : components.percentEncodedPath
        self.devicePathPrefix = basePath + "/3/device/"
    }

    /// The name sent in TLS SNI and checked against the certificate; nil for an IP address, which SNI does not carry.
    public var serverName: String? {
        let isIPAddress = host.contains(":") || host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber }
        return isIPAddress ? nil : host
    }

    public var description: String { "\(host):\(port)" }
}
