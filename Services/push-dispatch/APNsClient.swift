import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
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

    let connections: HTTPClientPool
    let signer: APNsTokenSigner
    var timeout: TimeAmount = .seconds(10)

    func send(_ job: PushJob, credentials: APNsCredentials) async -> Answer {
        let token: String
        do {
            token = try signer.token(teamId: credentials.teamId, keyId: credentials.keyId, privateKeyPEM: credentials.privateKey)
        } catch {
            return .rejected(status: 403, reason: "InvalidProviderToken", retryAfter: nil, invalidSince: nil)
        }
        var request = HTTPClientRequest(url: "\(credentials.baseURL)/3/device/\(job.deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(token)")
        if job.platform == .apnsVoip {
            // PushKit: the app's topic with `.voip`, delivered at once unless the publisher asked for low priority.
            request.headers.add(name: "apns-topic", value: credentials.topic + ".voip")
            request.headers.add(name: "apns-push-type", value: "voip")
            request.headers.add(name: "apns-priority", value: job.priority == .high ? "10" : "5")
        } else {
            request.headers.add(name: "apns-topic", value: credentials.topic)
            request.headers.add(name: "apns-push-type", value: job.isAlert ? "alert" : "background")
            request.headers.add(name: "apns-priority", value: job.isAlert && job.priority == .high ? "10" : "5")
        }
        request.headers.add(name: "apns-expiration", value: String(Int(job.expiration.timeIntervalSince1970)))
        request.headers.add(name: "apns-collapse-id", value: job.collapseId)
        request.headers.add(name: "apns-id", value: job.pushId.uuidString.lowercased())
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: job.payload))
        do {
            let httpClient = connections.client(teamId: credentials.teamId, keyId: credentials.keyId, baseURL: credentials.baseURL)
            let response = try await httpClient.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: 64 * 1024)
            if response.status == .ok { return .accepted }
            let error = try? JSONDecoder().decode(APNsErrorBody.self, from: Data(buffer: body))
            return .rejected(
                status: Int(response.status.code), reason: error?.reason ?? "HTTP \(response.status.code)",
                retryAfter: response.headers.first(name: "retry-after").flatMap { Int($0) },
                invalidSince: error?.timestamp.map { Date(timeIntervalSince1970: $0 / 1000) })
        } catch {
            return .unreachable(String(describing: error))
        }
    }
}

/// APNs error body: `{"reason": "BadDeviceToken"}`; 410 adds `"timestamp"` in milliseconds.
private struct APNsErrorBody: Decodable {
    var reason: String
    var timestamp: Double?
}

/// APNs ties a connection to the provider token it first saw: changing the token on a connection more often
/// than every 20 minutes gets 429 TooManyProviderTokenUpdates. So each signing key and endpoint has its own client.
extension HTTPClientPool {
    func client(teamId: String, keyId: String, baseURL: String) -> HTTPClient {
        client(for: "apns \(teamId).\(keyId)@\(baseURL)")
    }

    /// Replaces the client of this key (after a provider-token refresh, so the new token starts on a new connection).
    func reset(teamId: String, keyId: String, baseURL: String) {
        reset(key: "apns \(teamId).\(keyId)@\(baseURL)")
    }
}
