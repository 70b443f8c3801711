import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Receivers of an app's webhook POSTs: each records what arrived (the signature headers and the body, in order) and
/// answers 503 (or `status`, 400 to 599) to the next `fail` POSTs after it was set up, as a receiver that is down (or
/// refuses them) would; one set up with `redirect` answers every POST 307 to that URL instead (counted in
/// `redirected`), as a receiver pointing elsewhere; one set up with `delay` (seconds) answers each POST only after that
/// long, as a receiver that hangs (every POST is counted in `arrived` as it arrives). Each recorded POST carries the
/// moment it arrived (`receivedAt`, ISO 8601 with milliseconds), for measuring how long an event took to reach its
/// receiver.
final class WebhookReceiver: Sendable {
    struct Received: Codable, Sendable {
        var id: String?
        var timestamp: String?
        var signature: String?
        var body: String
        var receivedAt: String
    }

    struct Log: Codable, Sendable {
        var received: [Received] = []
        var failed = 0
        var redirected = 0
        var arrived = 0
    }

    private struct Receiver {
        var failuresLeft: Int
        var failureStatus: HTTPResponse.Status
        var redirect: String?
        var delaySeconds: Int
        var log = Log()
    }

    private let receivers = Mutex<[String: Receiver]>([:])

    func register(on router: Router<BasicRequestContext>) {
        router.put("receivers/{name}") { request, context in
            let name = context.parameters.get("name") ?? ""
            let failures = request.uri.queryParameters.get("fail").flatMap(Int.init) ?? 0
            let redirect = request.uri.queryParameters.get("redirect").map { String($0) }
            let delay = request.uri.queryParameters.get("delay").flatMap { Int($0) } ?? 0
            let status = request.uri.queryParameters.get("status").flatMap { Int($0) } ?? 503
            guard (400...599).contains(status) else { return Response(status: .badRequest) }
            self.receivers.withLock {
                $0[name] = Receiver(
                    failuresLeft: failures, failureStatus: HTTPResponse.Status(code: status), redirect: redirect, delaySeconds: delay)
            }
            return Response(status: .noContent)
        }
        router.post("receivers/{name}") { request, context in
            var receivedAt: [UInt8] = []
            ISO8601Timestamp.append(.now, to: &receivedAt)
            let name = context.parameters.get("name") ?? ""
            let body = String(buffer: try await request.body.collect(upTo: 1 << 20))
            let delay = self.receivers.withLock { receivers -> Int in
                receivers[name]?.log.arrived += 1
                return receivers[name]?.delaySeconds ?? 0
            }
            if delay > 0 { try await Task.sleep(for: .seconds(delay)) }
            let received = Received(
                id: request.headers[HTTPField.Name("X-Notify-Webhook-Id")!], timestamp: request.headers[HTTPField.Name("X-Notify-Webhook-Timestamp")!],
                signature: request.headers[HTTPField.Name("X-Notify-Webhook-Signature")!], body: body,
                receivedAt: String(decoding: receivedAt, as: UTF8.self))
            let (status, location): (HTTPResponse.Status, String?) = self.receivers.withLock { receivers in
                guard var receiver = receivers[name] else { return (.notFound, nil) }
                defer { receivers[name] = receiver }
                if let redirect = receiver.redirect {
                    receiver.log.redirected += 1
                    return (.temporaryRedirect, redirect)
                }
                if receiver.failuresLeft > 0 {
                    receiver.failuresLeft -= 1
                    receiver.log.failed += 1
                    return (receiver.failureStatus, nil)
                }
                receiver.log.received.append(received)
                return (.noContent, nil)
            }
            return Response(status: status, headers: location.map { [.location: $0] } ?? [:])
        }
        router.get("receivers/{name}") { _, context in
            let name = context.parameters.get("name") ?? ""
            guard let log = self.receivers.withLock({ $0[name]?.log }) else { return Response(status: .notFound) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(log))))
        }
    }
}
