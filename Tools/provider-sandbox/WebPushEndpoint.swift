import Foundation
import HTTPTypes
import Hummingbird

/// An RFC 8030 push service under `/webpush`: `POST /webpush/{subscriptionId}` with VAPID
/// authorization (RFC 8292) and an `aes128gcm` body (RFC 8291), which the sandbox decrypts with the
/// subscription's private key and records as the payload. Accepted messages answer 201 Created.
struct WebPushEndpoint: Sendable {
    static let provider = "webpush"
    /// The message a fault answers when it names none.
    static let faultReasons = [
        404: "Subscription not found", 410: "Subscription expired", 413: "Payload too large",
        429: "Too many requests", 500: "Internal server error", 503: "Service unavailable",
    ]

    let subscriptions: WebPushSubscriptions
    let verifier: VAPIDVerifier
    let faults: FaultInjector
    let recorder: DeliveryRecorder

    func register(on router: Router<ConnectionRequestContext>) {
        router.post("webpush/{subscriptionId}") { request, context in
            try await push(request, subscriptionId: context.parameters.get("subscriptionId") ?? "", context: context)
        }
    }

    /// Subscription, VAPID, injected faults, headers, then the body decrypted and recorded.
    private func push(_ request: Request, subscriptionId: String, context: ConnectionRequestContext) async throws -> Response {
        do {
            guard let subscription = subscriptions.subscription(id: subscriptionId) else {
                throw WebPushError.unknownSubscription
            }
            guard !subscription.unsubscribed else { throw WebPushError.expiredSubscription }
            let serverKey = try verifier.verify(authorization: request.headers[.authorization])
            if let restriction = subscription.applicationServerKey, Base64URL.decode(restriction) != serverKey {
                throw WebPushError.keyMismatch
            }
            switch try await faults.apply(
                provider: Self.provider,
                token: Substring(subscriptionId),
                connection: context.connection,
                recorder: recorder
            ) {
            case .proceed: break
            case .dropped: return Response(status: .serviceUnavailable)  // never delivered: the connection is gone
            case .fail(let fault):
                return reject(WebPushError(fault: fault), subscriptionId: subscriptionId, retryAfter: fault.retryAfter)
            }
            let ttl = try WebPushRequestValidator.validateHeaders(request.headers)
            let body = try await request.bodyBytes(limit: WebPushRequestValidator.maximumPayloadSize)
            guard body.count <= WebPushRequestValidator.maximumPayloadSize else { throw WebPushError.payloadTooLarge }
            var plaintext: [UInt8] = []
            if !body.isEmpty {
                guard request.headers[.contentEncoding]?.lowercased() == "aes128gcm" else { throw WebPushError.unknownEncoding }
                guard let privateKey = try? subscription.keyAgreementKey(), let auth = Base64URL.decode(subscription.auth) else {
                    throw WebPushError(status: 500, errno: 999, message: "The subscription's stored keys are unreadable")
                }
                plaintext = try WebPushDecryptor.decrypt(body, privateKey: privateKey, authSecret: auth)
            }
            recorder.recordDelivery(
                provider: Self.provider,
                deviceToken: subscriptionId,
                headers: WebPushRequestValidator.recordedHeaders(request.headers),
                payload: WebPushRequestValidator.payload(plaintext),
                authenticatedAs: Base64URL.encode(serverKey)
            )
            return Response(
                status: .created,
                headers: [
                    .location: verifier.audience + "/webpush/messages/" + UUIDText.next(),
                    .ttl: String(ttl),
                ]
            )
        } catch let error as WebPushError {
            return reject(error, subscriptionId: subscriptionId)
        }
    }

    private func reject(_ error: WebPushError, subscriptionId: String, retryAfter: String? = nil) -> Response {
        recorder.recordRejection(
            provider: Self.provider,
            deviceToken: subscriptionId,
            status: error.status,
            reason: error.message
        )
        return error.response(retryAfter: retryAfter)
    }
}
