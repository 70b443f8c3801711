import Foundation
import Logging
import NotifyOutbound
import NotifyRuntime
import NotifyStore
import PostgresNIO
import ServiceLifecycle

/// Reports, once at start, the WNS channels and Web Push endpoints already registered outside the push services (from
/// before the rule, or off a changed allowance): each is logged by subscription, app and host (never the URL, which
/// carries the device's token), and the push providers refuse to send to them (`refusal(ofPushEndpoint:at:)`).
struct PushEndpointAudit: Service {
    let client: PostgresClient
    let allowance: OutboundAllowance
    let logger: Logger
    /// Subscriptions logged one by one; beyond them only the count.
    var maximumListed = 100

    func run() async throws {
        let outside = try? await RetryUntilShutdown.run("read the registered push endpoints", logger: logger) { try await audit() }
        if let outside, outside > 0 {
            logger.warning(
                "subscriptions whose push endpoint is outside the push services are never pushed",
                metadata: ["count": "\(outside)", "allowance": "\(allowance)"])
        }
        try? await gracefulShutdown()
    }

    /// Logs the subscriptions outside the rules and answers how many there are.
    private func audit() async throws -> Int {
        var outside = 0
        for endpoint in try await PushDispatchStore(client: client, logger: logger).pushEndpoints() {
            let (subscriptionId, appId, platform) = (endpoint.subscriptionId, endpoint.appId, endpoint.platform.rawValue)
            do {
                try PushServiceHosts.check(endpoint.url, for: endpoint.platform == .wns ? .wns : .webPush, allowance: allowance)
            } catch {
                outside += 1
                if outside <= maximumListed {
                    logger.warning(
                        "a subscription's push endpoint is outside the push services; it is never pushed",
                        metadata: ["subscriptionId": "\(subscriptionId)", "appId": "\(appId)", "platform": "\(platform)", "host": "\(error.host)"])
                }
            }
        }
        return outside
    }
}
