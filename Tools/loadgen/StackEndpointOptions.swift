import ArgumentParser
import Foundation

/// Where the stack a load run drives listens (loopback only), and the operator token it sets its app up with:
/// `loadgen http`, `loadgen overload` and `loadgen broadcast`.
struct StackEndpointOptions: ParsableArguments {
    @Option(name: .customLong("ingest-url"), help: "Ingest's base URL.")
    var ingestURL = "http://127.0.0.1:21080"
    @Option(name: .customLong("sandbox-url"), help: "The provider sandbox's control API.")
    var sandboxURL = "http://127.0.0.1:21090"
    @Option(name: .customLong("sandbox-apns-url"), help: "The sandbox's APNs endpoint, stored as the app's APNs endpoint (push-dispatch connects to it).")
    var sandboxAPNsURL = "https://localhost:21443"
    @Option(help: "Operator token for the app's setup (POST and PATCH /v1/apps). (default: $NOTIFY_ADMIN_TOKEN, else local-admin-token)")
    var adminToken: String?

    /// The endpoints parsed (each a loopback URL), and the operator token.
    func resolved() throws -> (ingest: String, sandbox: String, apns: String, admin: String) {
        (
            try LoopbackURL.parse(ingestURL, option: "--ingest-url"), try LoopbackURL.parse(sandboxURL, option: "--sandbox-url"),
            try LoopbackURL.parse(sandboxAPNsURL, option: "--sandbox-apns-url"),
            adminToken ?? ProcessInfo.processInfo.environment["NOTIFY_ADMIN_TOKEN"] ?? "local-admin-token"
        )
    }

    /// Checks the URLs; `publishesOverHTTP`: ingest's must also be a plain http URL loadgen can publish to.
    func check(publishesOverHTTP: Bool) throws {
        do { _ = try resolved() } catch { throw ValidationError("\(error)") }
        if publishesOverHTTP {
            do { _ = try PlainHTTPEndpoint(url: ingestURL) } catch { throw ValidationError("--ingest-url: \(error)") }
        }
    }
}
