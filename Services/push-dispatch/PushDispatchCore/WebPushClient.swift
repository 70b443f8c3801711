import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyModels
import NotifyOutbound

/// Sends one RFC 8030 push message: the job's payload encrypted for the subscription, with VAPID authorization.
struct WebPushClient: Sendable {
    let http: OutboundHTTPClient
    let vapid: VAPIDSigner

    /// The push message request: the payload encrypted for the subscription, VAPID authorization, TTL, Urgency, Topic.
    func request(for job: PushJob, credentials: WebPushCredentials) async throws(UnsendablePush) -> HTTPClientRequest {
        guard let keys = job.keys else { throw UnsendablePush(action: .fail, reason: "the subscription has no p256dh and auth keys") }
        let body: Data
        let authorization: String
        do {
            body = try WebPushEncryption.encrypt(Data(job.payload.utf8), for: keys)
        } catch {
            throw UnsendablePush(action: .fail, reason: "the payload cannot be encrypted for the subscription's keys: \(error)")
        }
        do {
            authorization = try await vapid.authorization(
                privateKeyPEM: credentials.vapidPrivateKey, subject: credentials.subject, endpoint: job.deviceToken)
        } catch is VAPIDSigner.InvalidEndpoint {
            throw UnsendablePush(action: .fail, reason: "the push endpoint is not a URL")
        } catch {
            throw UnsendablePush(action: .credentials, reason: "the VAPID private key cannot sign: \(error)")
        }
        var request = HTTPClientRequest(url: job.deviceToken)
        request.method = .POST
        request.headers.add(name: "authorization", value: authorization)
        request.headers.add(name: "ttl", value: String(max(Int(job.expiration.timeIntervalSinceNow), 0)))
        request.headers.add(name: "urgency", value: Self.urgency(job))
        request.headers.add(name: "topic", value: Self.topic(job.notificationId))
        request.headers.add(name: "content-encoding", value: "aes128gcm")
        request.headers.add(name: "content-type", value: "application/octet-stream")
        request.body = .bytes(ByteBuffer(bytes: body))
        return request
    }

    func send(_ request: HTTPClientRequest, of appId: String) async -> ProviderAnswer {
        await ProviderAnswer.send(request, of: appId, on: http) { response, body in
            struct PushServiceError: Decodable {
                var message: String?
            }
            return (try? JSONDecoder().decode(PushServiceError.self, from: Data(buffer: body)))?.message ?? "HTTP \(response.status.code)"
        }.answer
    }

    /// RFC 8030 §5.3: alerts the sender marked high priority wake the device; shoulder taps may wait for power.
    static func urgency(_ job: PushJob) -> String {
        switch job.priority {
        case .high where job.isAlert: return "high"
        case .low: return "low"
        default: return "normal"
        }
    }

    /// RFC 8030 §5.4: the notification id's 16 bytes, base64url (22 characters), so a newer push replaces an older one.
    static func topic(_ notificationId: UUID) -> String {
        Base64URLCoding.encode(withUnsafeBytes(of: notificationId.uuid) { Data($0) })
    }
}
