import Foundation
import HTTPTypes
import Hummingbird
import Synchronization

/// Receivers of an app's webhook POSTs: each records what arrived (the signature headers and the body, in order) and
/// answers 503 to the next `fail` POSTs after it was set up, as a receiver that is down would.
final class WebhookReceiver: Sendable {
    struct Received: Codable, Sendable {
        var id: String?
        var timestamp: String?
        var signature: String?
        var body: String
    }

    struct Log: Codable, Sendable {
        var received: [Received] = []
        var failed = 0
    }

    private struct Receiver {
        var failuresLeft: Int
        var log = Log()
    }

    private let receivers = Mutex<[String: Receiver]>([:])

    func register(on router: Router<BasicRequestContext>) {
        router.put("receivers/{name}") { request, context in
            let name = context.parameters.get("name") ?? ""
            let failures = request.uri.queryParameters.get("fail").flatMap(Int.init) ?? 0
            self.receivers.withLock { $0[name] = Receiver(failuresLeft: failures) }
            return Response(status: .noContent)
        }
        router.post("receivers/{name}") { request, context in
            let name = context.parameters.get("name") ?? ""
            let body = String(buffer: try await request.body.collect(upTo: 1 << 20))
            let received = Received(
                id: request.headers[HTTPField.Name("X-Notify-Webhook-Id")!], timestamp: request.headers[HTTPField.Name("X-Notify-Webhook-Timestamp")!],
                signature: request.headers[HTTPField.Name("X-Notify-Webhook-Signature")!], body: body)
            let status: HTTPResponse.Status = self.receivers.withLock { receivers in
                guard var receiver = receivers[name] else { return .notFound }
                defer { receivers[name] = receiver }
                if receiver.failuresLeft > 0 {
                    receiver.failuresLeft -= 1
                    receiver.log.failed += 1
                    return .serviceUnavailable
                }
                receiver.log.received.append(received)
                return .noContent
            }
            return Response(status: status)
        }
        router.get("receivers/{name}") { _, context in
            let name = context.parameters.get("name") ?? ""
            guard let log = self.receivers.withLock({ $0[name]?.log }) else { return Response(status: .notFound) }
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(log))))
        }
    }
}
