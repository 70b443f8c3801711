import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NotifyAMQP
import NotifyDatabase
import NotifyJSON
import NotifyModels
import NotifyOutbound
import NotifyRuntime
import NotifyStore
import NotifyWire
import PostgresNIO
import ServiceLifecycle

/// POSTs the events of `webhooks.deliveries` to the apps' webhooks, signed, each app's events in order in a lane of its
/// own (`WebhookLanes`), the apps at once.
///
/// Each POST carries `X-Notify-Webhook-Id` (the event id, the same on every attempt), `X-Notify-Webhook-Timestamp`
/// (Unix seconds) and `X-Notify-Webhook-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`; a receiver
/// refuses a timestamp far from its clock to stop replays. A 2xx answer delivers it. No answer, a 5xx, 408 or 429 is
/// tried again after 0.5 s, then twice as long each time (at most 60 s), up to `maximumAttempts`: the event waits in
/// `webhooks.retry` (held by `RetryForwarder` until due), and the app's later events wait behind it, while every other
/// app's events go on. A 3xx, another 4xx, a URL the outbound policy refuses, or the last attempt dead-letters it
/// (`webhooks.deliveries.dead`). Every attempt is reported on `webhooks.outcomes` for the delivery log. The webhook is
/// read again before every attempt, so an app deleted (or its webhook removed) meanwhile gets no more.
struct WebhookDispatcher: Sendable {
    /// Where events wait for a retry, or behind their app's retry.
    static let retryQueue = "webhooks.retry"
    /// The attempts an event had (an integer header; absent: none).
    static let attemptsHeader = "x-notify-webhook-attempts"
    /// Set on an event that comes back from `retryQueue`.
    static let waitedHeader = "x-notify-webhook-waited"
    /// The queues webhook delivery declares: the events, their retries, the attempts' outcomes.
    static let topology = AMQPTopology.webhooks.merging(.workQueue(retryQueue))

    let http: OutboundHTTPClient
    let database: PostgresClient
    let publisher: AMQPPublisher
    /// Opens the webhook's sealed secret.
    let keyring: SecretKeyring
    let lanes: WebhookLanes
    let logger: Logger
    var maximumAttempts = 8
    /// Seconds before the second attempt; each next waits twice as long, at most 60 s.
    var firstDelay: TimeInterval = 0.5

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

    /// The wait in seconds before the attempt after `attempt` (1-based): `firstDelay` doubling, at most 60 s.
    func retryDelay(after attempt: Int) -> TimeInterval {
        min(firstDelay * Double(1 << min(attempt - 1, 16)), 60)
    }

    func handle(_ deliveries: [AMQPDelivery]) async -> AMQPHandling {
        // Each event takes its place in its app's lane now: the consumer calls this in the order the events arrived
        // (`startsInOrder`), before the waits of the batches before it have ended.
        var dispositions = [AMQPDisposition](repeating: .requeue, count: deliveries.count)
        var byApp: [String: [(index: Int, delivery: WebhookDelivery, ticket: WebhookLanes.Ticket)]] = [:]
        var apps: [String] = []
        for (index, message) in deliveries.enumerated() {
            do {
                let delivery = try WebhookDelivery(message)
                if byApp[delivery.appId] == nil { apps.append(delivery.appId) }
                byApp[delivery.appId, default: []].append((index, delivery, lanes.reserve(appId: delivery.appId)))
            } catch {
                dispositions[index] = .deadLetter(reason: "not a webhook delivery: \(error)")
            }
        }
        return .settleAfter { [self, dispositions, byApp, apps] in
            var dispositions = dispositions
            // Each app's events one after another, in order; the apps at once.
            await withTaskGroup(of: [(Int, AMQPDisposition)].self) { group in
                for app in apps {
                    let events = byApp[app] ?? []
                    group.addTask {
                        var settled: [(Int, AMQPDisposition)] = []
                        for (index, delivery, ticket) in events {
                            settled.append((index, await dispatch(delivery, message: deliveries[index], ticket: ticket)))
                        }
                        return settled
                    }
                }
                for await settled in group {
                    for (index, disposition) in settled { dispositions[index] = disposition }
                }
            }
            return dispositions
        }
    }

    private func dispatch(_ delivery: WebhookDelivery, message: AMQPDelivery, ticket: WebhookLanes.Ticket) async -> AMQPDisposition {
        let attempts = message.properties.headers[Self.attemptsHeader]?.integerValue.map { Int($0) } ?? 0
        let returning = message.properties.headers[Self.waitedHeader] != nil
        if let due = await lanes.admit(ticket, returning: returning) {
            return await wait(message, appId: delivery.appId, attempts: attempts, until: due)
        }
        let (disposition, retry) = await attempt(delivery, number: attempts + 1)
        guard let retry, let due = lanes.leave(ticket, retryAt: Date().addingTimeInterval(retry)) else {
            lanes.leave(ticket, retryAt: nil)
            return disposition
        }
        return await wait(message, appId: delivery.appId, attempts: attempts + 1, until: due)
    }

    /// Puts the event in `retryQueue`, due at `due`, then acks it here; requeued when that cannot be done.
    private func wait(_ message: AMQPDelivery, appId: String, attempts: Int, until due: Date) async -> AMQPDisposition {
        var properties = message.properties
        properties.headers.merge(DelayedForward.properties(due: due, to: WebhookDelivery.queue).headers) { $1 }
        properties.headers[Self.attemptsHeader] = .integer(Int64(attempts))
        properties.headers[Self.waitedHeader] = .integer(1)
        let waiting = await RetryUntilShutdown.succeeded("put a webhook event in the delay queue", logger: logger) {
            try await publisher.publish(AMQPOutboundMessage(routingKey: Self.retryQueue, body: message.body, properties: properties))
        }
        if waiting { return .ack }
        lanes.forgetWait(appId: appId)
        return .requeue
    }

    /// Attempt `number` of the event: its disposition, or the wait before the next attempt (nil: none).
    private func attempt(_ delivery: WebhookDelivery, number: Int) async -> (AMQPDisposition, retry: TimeInterval?) {
        // Tried again in place while the database does not answer: requeued at once, the event would come straight
        // back and burn the queue's delivery limit (then be dead-lettered) within seconds of an outage.
        let found = try? await RetryUntilShutdown.run("read the app's webhook", logger: logger) {
            var webhooks: [(url: String, secret: String)] = []
            if let stored = try await PostgresAppStore(client: database, logger: logger).webhook(appId: delivery.appId) {
                webhooks.append((stored.url, try keyring.openText(stored.sealedSecret, for: .webhookSecret(appId: delivery.appId))))
            }
            return webhooks
        }
        guard let found else { return (.requeue, nil) }
        // The app or its webhook was removed since: nothing to send.
        guard let webhook = found.first else { return (.ack, nil) }
        let (status, reason, refused) = await post(Self.body(of: delivery), of: delivery, to: webhook)
        let delivered = status.map { (200..<300).contains($0) } ?? false
        let retriable = !refused && (status.map { $0 >= 500 || $0 == 408 || $0 == 429 } ?? true)
        let last = number >= maximumAttempts || (!delivered && !retriable)
        let result = delivered ? "delivered" : (last ? "failed" : "retrying")
        await report(WebhookAttempt(
            eventId: delivery.eventId, appId: delivery.appId, type: delivery.type, attempt: number, status: status, result: result,
            reason: reason, at: Date()))
        if delivered { return (.ack, nil) }
        if last { return (.deadLetter(reason: "webhook answered \(status.map(String.init) ?? "nothing") after \(number) attempts: \(reason ?? "")"), nil) }
        return (.ack, retryDelay(after: number))
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
            // On the app's own connections: a receiver sharing a host with another app's cannot hold its streams.
            let response = try await http.execute(request, timeout: .seconds(10), partition: delivery.appId)
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
