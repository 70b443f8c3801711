import Foundation

/// URLs the load generator may talk to: only loopback hosts, so a run can never hit a real deployment.
enum LoopbackURL {
    /// Parses `text` and refuses anything but http(s) on a loopback host; no trailing slash.
    static func parse(_ text: String, option: String) throws -> String {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw LoadGenError("\(option) must be an http(s) URL, got \(text)")
        }
        guard isLoopback(host) else {
            throw LoadGenError("\(option): \(host) is not a loopback host; loadgen only runs against the local stack")
        }
        var trimmed = text
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed
    }

    /// Throws unless `url` is a `postgres://` URL on a loopback host (`--database-url`).
    static func requireLoopbackDatabase(_ url: String) throws {
        guard let host = URLComponents(string: url)?.host, isLoopback(host) else {
            throw LoadGenError("--database-url must be a postgres:// URL on a loopback host, got \(url)")
        }
    }

    static func isLoopback(_ rawHost: String) -> Bool {
        let host = rawHost.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else { return false }
        return parts[0] == "127"
    }
}

struct LoadGenError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
