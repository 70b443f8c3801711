import Crypto
import NotifyModels
import NotifyOutbound
import NotifyTestSupport
import Testing

@testable import PushDispatchCore

/// The URLs devices register as push endpoints (WNS channels, Web Push endpoints) are POSTed to with the app's
/// credentials: only https on a push service's hosts, or on one the operator admits, is ever called.
@Suite("Push endpoints")
struct PushEndpointCheckTests {
    @Test("an endpoint off the push services' hosts, or plain http even on an admitted host, is never sent to; the subscription is kept")
    func offThePushServices() async throws {
        try await withLoopbackProvider(answering: { _ in .init(status: 201) }) { server, http in
            let wns = WNSProvider(
                client: WNSClient(http: http, tokens: AccessTokenCache()),
                credentials: FixedCredentials(WNSCredentials(packageSid: "ms-app://s-1", clientSecret: "secret", tokenURL: "\(server.baseURL)/token")))
            let webPush = WebPushProvider(
                client: WebPushClient(http: http, vapid: VAPIDSigner()),
                credentials: FixedCredentials(WebPushCredentials(vapidPrivateKey: P256.Signing.PrivateKey().pemRepresentation, subject: "mailto:ops@example.com")))
            let keys = UserAgentDecryption().keys
            for endpoint in ["\(server.baseURL)/push", "https://push.example.org/channel", "https://db5.notify.windows.com.example.net/x", "not a url"] {
                let verdicts = [
                    await wns.deliver(PushJob.fixture(.wns, deviceToken: endpoint)),
                    await webPush.deliver(PushJob.fixture(.webpush, deviceToken: endpoint, keys: keys)),
                ]
                for verdict in verdicts {
                    #expect(verdict.action == .fail, "\(endpoint)")
                    #expect(verdict.reason?.hasPrefix("not sent") == true, "\(endpoint): \(verdict.reason ?? "")")
                }
            }
            #expect(server.requests.isEmpty)
        }
    }
}
