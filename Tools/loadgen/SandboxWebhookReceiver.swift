import Foundation
import NotifyModels

/// A receiver of an app's webhook POSTs at the sandbox (`/receivers/{name}`, on its control port, which the stack's
/// outbound policy admits), made the app's webhook; read back for what arrived and when.
struct SandboxWebhookReceiver: Sendable {
    /// What the receiver recorded.
    struct Log: Decodable {
        struct Received: Decodable {
            let body: String
            /// When the POST arrived (ISO 8601).
            let receivedAt: String
        }

        /// POSTs answered and recorded (one that waited out a delay too).
        let received: [Received]
        /// POSTs that arrived, counted as they arrive.
        let arrived: Int
    }

    private struct Event: Decodable { let createdAt: String }
    private struct Ignored: Decodable {}

    let client: JSONClient
    let url: String
    let webhookURL: String
    let apiKey: String

    /// Sets up the receiver `name`, answering each POST after `delaySeconds` (0: at once), and makes it the webhook of
    /// the app (`appId`, `apiKey`) for every event.
    static func create(setup: StackSetup, name: String, appId: String, apiKey: String, delaySeconds: Int) async throws -> SandboxWebhookReceiver {
        let url = "\(setup.sandboxURL)/receivers/\(name)"
        let created = try await setup.client.send(.PUT, "\(url)?delay=\(delaySeconds)")
        guard created.status == 204 else { throw LoadGenError("PUT \(url) answered \(created.status)") }
        let webhookURL = "\(setup.ingestURL)/v1/apps/\(appId)/webhook"
        _ = try await setup.client.call(.PUT, webhookURL, bearer: apiKey, json: WebhookRequest(url: url), as: Ignored.self)
        return SandboxWebhookReceiver(client: setup.client, url: url, webhookURL: webhookURL, apiKey: apiKey)
    }

    func log() async throws -> Log {
        try JSONClient.decode(Log.self, try await client.send(.GET, url), method: .GET, url: url)
    }

    /// Each recorded event created at or after `since`: its `createdAt` → its arrival here.
    func latencies(since: Date) async throws -> [Duration] {
        try await log().received.compactMap { received in
            guard let event = try? JSONDecoder().decode(Event.self, from: Data(received.body.utf8)),
                let created = WireCoding.parseTimestamp(event.createdAt), created >= since,
                let arrived = WireCoding.parseTimestamp(received.receivedAt)
            else { return nil }
            return .seconds(arrived.timeIntervalSince(created))
        }
    }

    /// Removes the app's webhook: its events waiting for another attempt get none.
    func removeWebhook() async throws {
        let answer = try await client.send(.DELETE, webhookURL, bearer: apiKey)
        guard (200..<300).contains(answer.status) else { throw LoadGenError("DELETE \(webhookURL) answered \(answer.status)") }
    }
}
