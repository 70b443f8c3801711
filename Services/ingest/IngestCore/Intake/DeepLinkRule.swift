import Foundation

/// The rule of `push.url`, the deep link a tap on the alert opens: an absolute `https` URL with a host, or a URL of an
/// app's own scheme (`myapp://orders/42`). Refused: other web and browser-internal schemes (a push must not run script
/// or read files where it is opened), anything but printable ASCII (a link is percent-encoded), and more than 2048 bytes.
enum DeepLinkRule {
    static let maximumBytes = 2048
    /// Schemes that run script, read local or browser-internal content, or are not https's secure web (`http`).
    static let refusedSchemes: Set<String> = [
        "javascript", "vbscript", "data", "file", "blob", "about", "filesystem", "view-source", "jar", "mhtml", "intent",
        "content", "chrome", "chrome-extension", "moz-extension", "ms-appx", "ms-appdata", "http", "ftp", "ws", "wss",
    ]

    /// Why `url` is not a deep link notify sends, or nil when it is one.
    static func refusal(of url: String) -> String? {
        guard !url.isEmpty, url.utf8.count <= maximumBytes else { return "url must be 1 to \(maximumBytes) bytes" }
        guard url.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return "url must be printable ASCII without spaces (percent-encode the rest)"
        }
        guard let colon = url.firstIndex(of: ":"), let first = url.first, first.isLetter,
            url[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) })
        else { return "url must be an absolute URL: a scheme, then ':'" }
        let scheme = url[..<colon].lowercased()
        if refusedSchemes.contains(scheme) {
            return "url may not use the \(scheme) scheme: give an https URL or one of the app's own scheme"
        }
        if scheme == "https" {
            guard let parsed = URL(string: url), let host = parsed.host, !host.isEmpty, parsed.user == nil, parsed.password == nil else {
                return "url must be an https URL with a host and no user name or password"
            }
        } else if url[url.index(after: colon)...].isEmpty {
            return "url must name something after its scheme"
        }
        return nil
    }
}
