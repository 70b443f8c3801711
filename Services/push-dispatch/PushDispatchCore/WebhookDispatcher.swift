import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NotifyJSON
import NotifyAMQP
import NotifyDatabase
import NotifyModels
import NotifyOutbound
import NotifyRuntime
import NotifyWire
import PostgresNIO
import ServiceLifecycle

/// POSTs the events of `webhooks.deliveries` to the apps' webhooks, one at a time and in order, signed.
///
/// Each POST carries `X-Notify-Webhook-Id` (the event id, the same on every attempt), `X-Notify-Webhook-Timestamp`
/// (Unix seconds) and `X-Notify-Webhook-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`; a receiver
/// refuses a timestamp far from its clock to stop replays. A 2xx answer delivers it. No answer, a 5xx, 408 or 429 is
/// tried again after 0.5 s, then twice as long each time, up to `maximumAttempts`, holding the events behind it, so
/// they arrive in order; another 4xx, or the last attempt, dead-letters it (`webhooks.deliveries.dead`). Every attempt
/// is reported on `webhooks.outcomes` for the delivery log.
struct WebhookDispatcher: Sendable {
    let http: OutboundHTTPClient
    let database: PostgresClient
    let publisher: AMQPPublisher
    /// Opens the webhook's sealed secret.
    let keyring: SecretKeyring
    let logger: Logger
    var maximumAttempts = 8
    var firstDelay: Duration = .milliseconds(500)

    /// The body POSTed: the event with its data (already JSON, stored by storage).
    static func body(of delivery: WebhookDelivery) -> Data {
        var writer = JSONWriter(capacity: 192 + delivery.data.count)
        writer.beginObject()
        writer.key("id"); writer.uuid(delivery.eventId)
        writer.key("type"); writer.string(delivery.type)
        writer.key("appId"); writer.string(delivery.appId)
        writer.key("createdAt"); writer.string(WireCoding.formatTimestamp(delivery.createdAt))
        writer.key("data")
        var body = Data(writer.bytes)
        body.append(delivery.data)
        body.append(UInt8(ascii: "}"))
        return body
    }

    /// The signature header's value for `body` sent at `timestamp`.
    static func signature(of body: Data, timestamp: Int, secret: String) -> String {
        var signed = Data("\(timestamp).".utf8)
        signed.append(body)
        let mac = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Data(secret.utf8)))
        return "v1=" + mac.map { String(format: "%02x", $0) }.joined()
    }

    func handle(_ deliveries: [AMQPDelivery]) async -> [AMQPDisposition] {
        var dispositions: [AMQPDisposition] = []
        for delivery in deliveries {
            dispositions.append(await dispatch(delivery))
        }
        return dispositions
    }

    private func dispatch(_ message: AMQPDelivery) async -> AMQPDisposition {
        let delivery: WebhookDelivery
        do {
            delivery = try WebhookDelivery(message)
        } catch {
            return .deadLetter(reason: "not a webhook delivery: \(error)")
        }
        // Tried again in place while the database does not answer: requeued at once, the event would come straight
        // back and burn the queue's delivery limit (then be dead-lettered) within seconds of an outage.
        let found = try? await RetryUntilShutdown.run("read the app's webhook", logger: logger) {
            var webhooks: [(url: String, secret: String)] = []
            let rows = try await database.query("SELECT url, secret FROM app_webhooks WHERE app_id = \(delivery.appId)", logger: logger)
            for try await (url, sealed) in rows.decode((String, String).self) {
                webhooks.append((url, try keyring.openText(sealed, for: .webhookSecret(appId: delivery.appId))))
            }
            return webhooks
        }
        guard let found else { return .requeue }
        let webhook = found.first
        // The webhook was removed since: nothing to send.
        guard let webhook else { return .ack }
        let body = Self.body(of: delivery)
        var delay = firstDelay
        for attempt in 1...maximumAttempts {
            let (status, reason, refused) = await post(body, of: delivery, to: webhook)
            let delivered = status.map { (200..<300).contains($0) } ?? false
            let retriable = !refused && (status.map { $0 >= 500 || $0 == 408 || $0 == 429 } ?? true)
            let last = attempt == maximumAttempts || (!delivered && !retriable)
            let result = delivered ? "delivered" : (last ? "failed" : "retrying")
            await report(WebhookAttempt(
                eventId: delivery.eventId, appId: delivery.appId, type: delivery.type, attempt: attempt, status: status, result: result,
                reason: reason, at: Date()))
            if delivered { return .ack }
            if last { return .deadLetter(reason: "webhook answered \(status.map(String.init) ?? "nothing") after \(attempt) attempts: \(reason ?? "")") }
            if Task.isShuttingDownGracefully { return .requeue }
            await pauseUnlessShuttingDown(for: delay)
            delay = min(delay * 2, .seconds(60))
        }
        return .requeue
    }

    /// POSTs once; answers the status (nil: no answer), why it failed, and whether the outbound policy refused the URL
    /// (nothing sent; trying again cannot help). A redirect is an answer like any other 3xx: it is not followed.
    private func post(
        _ body: Data, of delivery: WebhookDelivery, to webhook: (url: String, secret: String)
    ) async -> (status: Int?, reason: String?, refused: Bool) {
        let timestamp = Int(Date().timeIntervalSince1970)
        var request = HTTPClientRequest(url: webhook.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "notify-webhooks")
        request.headers.add(name: "X-Notify-Webhook-Id", value: delivery.eventId.lowercasedString)
        request.headers.add(name: "X-Notify-Webhook-Timestamp", value: String(timestamp))
        request.headers.add(name: "X-Notify-Webhook-Signature", value: Self.signature(of: body, timestamp: timestamp, secret: webhook.secret))
        request.body = .bytes(ByteBuffer(data: body))
        do {
            let response = try await http.execute(request, timeout: .seconds(10))
            _ = try? await response.body.collect(upTo: 64 << 10)
            let status = Int(response.status.code)
            return (status, (200..<300).contains(status) ? nil : "HTTP \(status)", false)
        } catch let refusal as OutboundRefusal {
            return (nil, "not sent: \(refusal)", true)
        } catch {
            return (nil, "\(error)", false)
        }
    }

    private func report(_ outcome: WebhookAttempt) async {
        do {
            try await publisher.publish(AMQPOutboundMessage(routingKey: WebhookOutcomeBatch.queue, wire: WebhookOutcomeBatch(outcomes: [outcome])))
        } catch {
            logger.warning("could not report a webhook attempt", metadata: ["error": "\(error)", "eventId": "\(outcome.eventId)"])
        }
    }
}
