import Foundation

/// Where the publish client connects: a plain `http://` base URL taken apart into the TCP address, the `Host` header
/// value and the path every request path is appended to.
struct PlainHTTPEndpoint: Sendable {
    /// Host name or address to connect to (an IPv6 address without brackets).
    let host: String
    let port: Int
    /// The URL's authority as written (`127.0.0.1:21080`, `[::1]:21080`), for the `Host` header.
    let authority: String
    /// The URL's path, no trailing slash ("" for most).
    let basePath: String

    /// Takes apart `url`, which must be `http://` (the client speaks no TLS) with no query or fragment.
    init(url: String) throws {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "http",
            let rawHost = components.percentEncodedHost, !rawHost.isEmpty, components.query == nil, components.fragment == nil
        else {
            throw LoadGenError("publishing over HTTP needs a plain http:// URL without query or fragment, got \(url)")
        }
        host = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        port = components.port ?? 80
        let bracketedHost = host.contains(":") ? "[\(host)]" : host
        authority = components.port.map { "\(bracketedHost):\($0)" } ?? bracketedHost
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        basePath = path
    }
}
