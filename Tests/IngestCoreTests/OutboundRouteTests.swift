import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import IngestCore

/// The outbound address policy at registration, in-process: the URLs a tenant or a device names are refused before
/// anything is stored or published.
@Suite struct OutboundRouteTests {
    private static let apiKey: HTTPFields = [.authorization: "Bearer api-key", .contentType: "application/json"]

    @Test("webhook and poll-source URLs on refused addresses are answered 400 naming url, nothing published", arguments: [
        "http://127.0.0.1:8080/x", "http://[::1]/x", "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/", "http://[::ffff:10.0.0.1]/",
        "http://0.0.0.0/", "http://100.100.100.200/",
    ])
    func tenantURLs(_ url: String) async throws {
        let testing = RouteTesting()
        try await testing.run { client in
            for path in ["/v1/apps/\(RouteTesting.appId)/webhook", "/v1/apps/\(RouteTesting.appId)/poll-sources/feed"] {
                let response = try await client.execute(uri: path, method: .put, headers: Self.apiKey, body: ByteBuffer(string: #"{"url":"\#(url)"}"#))
                #expect(response.status == .badRequest, "\(path) \(url)")
                let body = try ErrorBody(response)
                #expect(body.error.code == "invalid_field" && body.error.field == "url", "\(path) \(url)")
                #expect(body.error.message.contains("which the service does not call"), "\(body.error.message)")
            }
        }
        #expect(testing.published.all.isEmpty)
    }

    @Test("a WNS channel or Web Push endpoint off the push services is answered 400 naming pushToken", arguments: [
        ("wns", "https://attacker.example/channel"), ("wns", "https://notify.windows.com.evil.example/"), ("wns", "https://db5.notify.windows.com:444/"),
        ("webpush", "https://attacker.example/push"), ("webpush", "https://127.0.0.1/push"),
    ])
    func pushEndpoints(_ platform: String, _ endpoint: String) async throws {
        let testing = RouteTesting()
        let token = try await RouteTesting.userToken("alice")
        try await testing.run { client in
            let keys = #""keys":{"p256dh":"BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM","auth":"tBHItJI5svbpez7KI4CCXg"},"#
            let response = try await client.execute(
                uri: "/v1/me/subscriptions", method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"platform":"\#(platform)",\#(platform == "webpush" ? keys : "")"pushToken":"\#(endpoint)"}"#))
            #expect(response.status == .badRequest)
            let body = try ErrorBody(response)
            #expect(body.error.code == "invalid_field" && body.error.field == "pushToken", "\(body.error)")
        }
        #expect(testing.published.all.isEmpty)
    }
}
