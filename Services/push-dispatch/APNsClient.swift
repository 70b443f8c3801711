import Foundation
import NIOCore
import NIOHTTP2
import NotifyModels

/// Sends one push over the APNs provider API (HTTP/2, token auth).
struct APNsClient: Sendable {
    /// What APNs answered.
    enum Answer: Sendable, Equatable {
        case accepted
        /// APNs refused it: status, Apple's reason (e.g. 410 Unregistered), Retry-After seconds,
        /// and for 410 the time Apple says the token stopped being valid.
        case rejected(status: Int, reason: String, retryAfter: Int?, invalidSince: Date?)
        /// No answer: connection refused, reset or timed out.
        case unreachable(String)
    }

    let connections: APNsTransport
    let signer: APNsTokenSigner
    var timeout: TimeAmount = .seconds(10)

    func send(_ job: PushJob, credentials: APNsCredentials) async -> Answer {
        let token: String
        do {
            token = try signer.token(teamId: credentials.teamId, keyId: credentials.keyId, privateKeyPEM: credentials.privateKey)
        } catch {
            return .rejected(status: 403, reason: "InvalidProviderToken", retryAfter: nil, invalidSince: nil)
        }
        do {
            let pool = try connections.pool(teamId: credentials.teamId, keyId: credentials.keyId, baseURL: credentials.baseURL)
            let response = try await pool.send(request(for: job, token: token, topic: credentials.topic, endpoint: pool.endpoint), timeout: timeout).get()
            if response.status == 200 { return .accepted }
            let error = try? JSONDecoder().decode(APNsErrorBody.self, from: Data(response.body.readableBytesView))
            return .rejected(
                status: response.status, reason: error?.reason ?? "HTTP \(response.status)",
                retryAfter: response.retryAfter.flatMap { Int($0) },
                invalidSince: error?.timestamp.map { Date(timeIntervalSince1970: $0 / 1000) })
        } catch {
            return .unreachable(String(describing: error))
        }
    }

    private func request(for job: PushJob, token: String, topic: String, endpoint: APNsTransportEndpoint) -> APNsTransportRequest {
        let pushType: String
        let priority: String
        let pushTopic: String
        if job.platform == .apnsVoip {
            // PushKit: the app's topic with `.voip`, delivered at once unless the publisher asked for low priority.
            pushTopic = topic + ".voip"
            pushType = "voip"
            priority = job.priority == .high ? "10" : "5"
        } else {
            pushTopic = topic
            pushType = job.isAlert ? "alert" : "background"
            priority = job.isAlert && job.priority == .high ? "10" : "5"
        }
        let body = ByteBuffer(string: job.payload)
        let path = endpoint.devicePathPrefix + job.deviceToken
        let expiration = String(Int(job.expiration.timeIntervalSince1970))
        let pushId = job.pushId.lowercasedString
        let contentLength = String(body.readableBytes)
        return APNsTransportRequest(
            headers: HTTP2Frame.FramePayload.Headers(headers: [
                ":method": "POST",
                ":scheme": "https",
                ":authority": endpoint.authority,
                ":path": path,
                "authorization": "bearer \(token)",
                "apns-topic": pushTopic,
                "apns-push-type": pushType,
                "apns-priority": priority,
                "apns-expiration": expiration,
                "apns-collapse-id": job.collapseId,
                "apns-id": pushId,
                "content-type": "application/json",
                "content-length": contentLength,
            ]),
            body: body)
    }
}

/// APNs error body: `{"reason": "BadDeviceToken"}`; 410 adds `"timestamp"` in milliseconds.
private struct APNsErrorBody: Decodable {
    var reason: String
    var timestamp: Double?
}
