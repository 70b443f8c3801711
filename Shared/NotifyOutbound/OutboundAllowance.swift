import Foundation

/// The destinations an operator admits beyond the public internet (`NOTIFY_OUTBOUND_ALLOW`): for local testing and
/// private deployments, each by host and port, so that the rest of a private range or the loopback stays refused.
///
/// Entries are separated by commas: `HOST:PORT`, where HOST is a host name (`localhost`, `hooks.internal`), an IPv4
/// address or range (`127.0.0.1`, `10.1.0.0/16`) or an IPv6 one in brackets (`[::1]`, `[fd00::/8]`), and PORT is a port
/// or `*` for every port. A name admits a URL naming that host (whatever it resolves to); an address or range admits
/// the addresses a URL's host resolves to. A name admitted here also passes the push-service host rules.
public struct OutboundAllowance: Sendable, Equatable, CustomStringConvertible {
    /// One admitted host (or range) and port.
    public struct Entry: Sendable, Equatable, CustomStringConvertible {
        enum Host: Sendable, Equatable {
            case name(String)
            case range(IPAddress, prefixLength: Int)
        }

        let host: Host
        /// nil: every port.
        let port: Int?

        public var description: String {
            let portText = port.map(String.init) ?? "*"
            switch host {
            case .name(let name): return "\(name):\(portText)"
            case .range(let address, let length):
                let full = address.isIPv4 ? 32 : 128
                let text = length == full ? address.description : "\(address)/\(length)"
                return address.isIPv4 ? "\(text):\(portText)" : "[\(text)]:\(portText)"
            }
        }
    }

    public let entries: [Entry]

    /// Nothing admitted: only public addresses are reached.
    public static let none = OutboundAllowance(entries: [])

    init(entries: [Entry]) {
        self.entries = entries
    }

    /// Parses the setting's text; the error names the entry that is wrong.
    public init(parsing text: String) throws(OutboundAllowanceError) {
        var entries: [Entry] = []
        for raw in text.split(separator: ",") {
            let item = raw.trimmingCharacters(in: .whitespaces)
            if item.isEmpty { continue }
            guard let colon = item.lastIndex(of: ":"), colon != item.startIndex else {
                throw OutboundAllowanceError(entry: item, reason: "an entry is HOST:PORT (PORT may be *)")
            }
            let hostText = item[..<colon]
            let portText = item[item.index(after: colon)...]
            let port: Int?
            if portText == "*" {
                port = nil
            } else if let number = Int(portText), (1...65_535).contains(number) {
                port = number
            } else {
                throw OutboundAllowanceError(entry: item, reason: "the port is 1 to 65535 or *")
            }
            entries.append(Entry(host: try Self.host(hostText, of: item), port: port))
        }
        self.entries = entries
    }

    private static func host(_ text: Substring, of entry: String) throws(OutboundAllowanceError) -> Entry.Host {
        var body = text
        let bracketed = body.hasPrefix("[") && body.hasSuffix("]")
        if bracketed { body = body.dropFirst().dropLast() }
        let parts = body.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        if let address = IPAddress(parts[0]) {
            if !address.isIPv4 && !bracketed { throw OutboundAllowanceError(entry: entry, reason: "an IPv6 address is written in brackets") }
            let full = address.isIPv4 ? 32 : 128
            guard parts.count == 1 || (Int(parts[1]).map { (0...full).contains($0) } ?? false) else {
                throw OutboundAllowanceError(entry: entry, reason: "a range's prefix length is 0 to \(full)")
            }
            return .range(address, prefixLength: parts.count == 1 ? full : Int(parts[1])!)
        }
        let name = body.lowercased()
        guard !bracketed, parts.count == 1, OutboundDestination.isHostName(name) else {
            throw OutboundAllowanceError(entry: entry, reason: "the host is a name, an IPv4 address or range, or an IPv6 one in brackets")
        }
        return .name(name)
    }

    /// Whether the host name `host` (lowercased) at `port` is admitted by name.
    public func admits(hostName host: String, port: Int) -> Bool {
        entries.contains { entry in
            guard entry.port == nil || entry.port == port, case .name(let name) = entry.host else { return false }
            return name == host
        }
    }

    /// Whether `address` at `port` is admitted by an address or range entry.
    public func admits(_ address: IPAddress, port: Int) -> Bool {
        entries.contains { entry in
            guard entry.port == nil || entry.port == port, case .range(let range, let length) = entry.host else { return false }
            return address.hasPrefix(range, length: length) || (address.embeddedIPv4?.hasPrefix(range, length: length) ?? false)
        }
    }

    /// The `host:port` of each entry naming one host (a name or a single address) at one port: where a URL may be plain
    /// http for what otherwise takes https only (identity providers' documents).
    public var plainHTTPHosts: Set<String> {
        Set(entries.compactMap { entry in
            guard let port = entry.port else { return nil }
            switch entry.host {
            case .name(let name): return "\(name):\(port)"
            case .range(let address, let length) where length == (address.isIPv4 ? 32 : 128): return "\(address):\(port)"
            case .range: return nil
            }
        })
    }

    public var description: String {
        entries.isEmpty ? "(none)" : entries.map(\.description).joined(separator: ",")
    }
}

/// An entry of `NOTIFY_OUTBOUND_ALLOW` that cannot be read.
public struct OutboundAllowanceError: Error, Sendable, CustomStringConvertible {
    public var entry: String
    public var reason: String
    public var description: String { "'\(entry)': \(reason)" }
}
