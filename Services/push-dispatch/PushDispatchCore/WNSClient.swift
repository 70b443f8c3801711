import AsyncHTTPClient
import Foundation
import NIOCore
import NotifyModels
import NotifyOutbound

/// Sends to a WNS channel URI (the device token) with the app's OAuth access token: toasts for alerts, raw
/// notifications for shoulder taps, and the DELETE that clears a notification's toast from the action center.
struct WNSClient: Sendable {
    /// `X-WNS-Group` of a toast whose notification has no `groupName`. The toast to clear is named by its tag alone (the
    /// notification id), whatever its group.
    static let group = "notify"

    let http: OutboundHTTPClient
    let tokens: AccessTokenCache

    /// The app's access token: cached, or fetched with its package SID and client secret.
    func accessToken(for credentials: WNSCredentials) async -> Result<String, AccessTokenFailure> {
        do {
            return .success(try await tokens.token(for: Self.cacheKey(credentials)) { [http] in
                try await OAuthTokenRequest.exchange(
                    url: credentials.resolvedTokenURL,
                    form: [
                        ("grant_type", "client_credentials"), ("client_id", credentials.packageSid),
                        ("client_secret", credentials.clientSecret), ("scope", "notify.windows.com"),
                    ],
                    on: http)
            })
        } catch let failure as AccessTokenFailure {
            return .failure(failure)
        } catch {
            return .failure(AccessTokenFailure(answer: .unreachable(String(describing: error))))
        }
    }

    /// Forgets an access token WNS refused, so the next push gets a new one.
    func invalidate(_ accessToken: String, of credentials: WNSCredentials) {
        tokens.invalidate(key: Self.cacheKey(credentials), value: accessToken)
    }

    /// `POST <channel URI>`: the toast XML of an alert (tagged, to be cleared later) or the raw JSON of a shoulder tap.
    func notify(_ job: PushJob, accessToken: String) async -> ProviderAnswer {
        var request = Self.request(to: job, accessToken: accessToken)
        request.method = .POST
        if job.isAlert {
            request.headers.add(name: "x-wns-type", value: "wns/toast")
            request.headers.add(name: "content-type", value: "text/xml")
            request.headers.add(name: "x-wns-tag", value: job.collapseId)
            request.headers.add(name: "x-wns-group", value: job.displayGroup ?? Self.group)
        } else {
            request.headers.add(name: "x-wns-type", value: "wns/raw")
            request.headers.add(name: "content-type", value: "application/octet-stream")
        }
        request.headers.add(name: "x-wns-ttl", value: String(max(Int(job.expiration.timeIntervalSinceNow), 1)))
        request.headers.add(name: "x-wns-priority", value: Self.priority(job))
        request.body = .bytes(ByteBuffer(string: job.payload))
        return await Self.send(request, of: job.appId, on: http)
    }

    /// `X-WNS-Priority` (1 high to 4 very low: how Windows delivers it under battery saver): an alert of a `high`
    /// notification 1, of a `low` one 3, of a `none` one 4; a shoulder tap (raw, sent at `low`) 3.
    static func priority(_ job: PushJob) -> String {
        switch job.priority {
        case .high: "1"
        case .low: "3"
        case .none: "4"
        }
    }

    /// `DELETE <channel URI>` with `X-WNS-Match`: removes the notification's toast from the device's action center.
    func clearToast(_ job: PushJob, accessToken: String) async -> ProviderAnswer {
        var request = Self.request(to: job, accessToken: accessToken)
        request.method = .DELETE
        request.headers.add(name: "x-wns-match", value: "type:wns/toast;tag=\(job.collapseId)")
        return await Self.send(request, of: job.appId, on: http)
    }

    private static func request(to job: PushJob, accessToken: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: job.deviceToken)
        request.headers.add(name: "authorization", value: "Bearer \(accessToken)")
        return request
    }

    private static func send(_ request: HTTPClientRequest, of appId: String, on http: OutboundHTTPClient) async -> ProviderAnswer {
        await ProviderAnswer.send(request, of: appId, on: http) { response, _ in
            response.headers.first(name: "x-wns-error-description") ?? "HTTP \(response.status.code)"
        }.answer
    }

    private static func cacheKey(_ credentials: WNSCredentials) -> String {
        "\(credentials.packageSid) \(credentials.clientSecret) \(credentials.resolvedTokenURL)"
    }
}
