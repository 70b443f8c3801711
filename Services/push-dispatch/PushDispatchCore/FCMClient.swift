import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyModels
import NotifyOutbound

/// Sends one message over FCM HTTP v1 with the service account's OAuth access token.
struct FCMClient: Sendable {
    let http: OutboundHTTPClient
    let tokens: AccessTokenCache

    /// The service account's access token: cached, or exchanged for a signed assertion.
    func accessToken(for account: FCMCredentials.ServiceAccount) async -> Result<String, AccessTokenFailure> {
        do {
            return .success(try await tokens.token(for: Self.cacheKey(account)) { [http] in
                let assertion: String
                do {
                    assertion = try await FCMAssertion.make(for: account)
                } catch {
                    throw AccessTokenFailure(answer: .rejected(status: 400, reason: "invalid_grant: the private key cannot sign: \(error)", retryAfter: nil))
                }
                return try await OAuthTokenRequest.exchange(
                    url: account.tokenUri, form: [("grant_type", FCMAssertion.grantType), ("assertion", assertion)], on: http)
            })
        } catch let failure as AccessTokenFailure {
            return .failure(failure)
        } catch {
            return .failure(AccessTokenFailure(answer: .unreachable(String(describing: error))))
        }
    }

    /// Forgets an access token FCM refused, so the next push gets a new one.
    func invalidate(_ accessToken: String, of account: FCMCredentials.ServiceAccount) {
        tokens.invalidate(key: Self.cacheKey(account), value: accessToken)
    }

    /// `POST {base}/v1/projects/{project}/messages:send` with the `body` made by `body(_:)`.
    func send(_ body: Data, of appId: String, accessToken: String, credentials: FCMCredentials) async -> ProviderAnswer {
        let project = credentials.serviceAccount.projectId
        var request = HTTPClientRequest(url: "\(credentials.baseURL)/v1/projects/\(project)/messages:send")
        request.method = .POST
        request.headers.add(name: "authorization", value: "Bearer \(accessToken)")
        request.headers.add(name: "content-type", value: "application/json; charset=UTF-8")
        request.body = .bytes(ByteBuffer(bytes: body))
        return await ProviderAnswer.send(request, of: appId, on: http) { response, body in
            let error = try? JSONDecoder().decode(FCMErrorBody.self, from: Data(buffer: body)).error
            return error?.details?.lazy.compactMap(\.errorCode).first ?? error?.status ?? "HTTP \(response.status.code)"
        }.answer
    }

    /// FCM's longest `android.ttl`: 28 days.
    static let maximumTTL = 2_419_200

    /// The request body: fanout's `message` object with the device token, and `android.ttl` and `webpush`'s `TTL` header
    /// counted to the job's expiration from now (so a retry asks for no more than is left) and capped at FCM's 28 days.
    static func body(_ job: PushJob, now: Date = Date()) throws(UnsendablePush) -> Data {
        guard case .object(var message) = try? JSONDecoder().decode(JSONValue.self, from: Data(job.payload.utf8)) else {
            throw UnsendablePush(action: .fail, reason: "the job's payload is not an FCM message object")
        }
        message["token"] = .string(job.deviceToken)
        let ttl = min(max(Int(job.expiration.timeIntervalSince(now)), 0), maximumTTL)
        if case .object(var android) = message["android"] {
            android["ttl"] = .string("\(ttl)s")
            message["android"] = .object(android)
        }
        if case .object(var webpush) = message["webpush"], case .object(var headers) = webpush["headers"] {
            headers["TTL"] = .string(String(ttl))
            webpush["headers"] = .object(headers)
            message["webpush"] = .object(webpush)
        }
        guard let body = try? JSONEncoder().encode(JSONValue.object(["message": .object(message)])) else {
            throw UnsendablePush(action: .fail, reason: "the FCM message cannot be encoded")
        }
        return body
    }

    private static func cacheKey(_ account: FCMCredentials.ServiceAccount) -> String {
        "\(account.clientEmail) \(account.privateKeyId) \(account.tokenUri)"
    }
}

/// FCM's error body: `{"error": {"code", "message", "status", "details": [{"@type", "errorCode"}]}}`.
private struct FCMErrorBody: Decodable {
    struct Error: Decodable {
        struct Detail: Decodable {
            var errorCode: String?
        }

        var status: String?
        var details: [Detail]?
    }

    var error: Error
}
