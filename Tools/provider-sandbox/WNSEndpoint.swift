import Foundation
import HTTPTypes
import Hummingbird

/// Windows Push Notification Services under `/wns`: `POST /wns/token` plays login.live.com's
/// client-credentials token endpoint; `POST /wns/channels/{channelId}` sends a notification to a
/// channel URI and `DELETE /wns/channels/{channelId}` with `X-WNS-Match` clears toasts, answered
/// with WNS's status codes and `X-WNS-*` headers.
struct WNSEndpoint: Sendable {
    static let provider = "wns"
    /// The `X-WNS-Error-Description` a fault answers when it names none.
    static let faultReasons = [
        400: "Bad request", 401: "Token expired", 403: "Forbidden", 404: "The channel URI is not valid",
        406: "Throttle limit exceeded", 410: "The channel expired", 413: "Payload too large",
        500: "Internal server error", 503: "Service unavailable",
    ]
    private static let scope = "notify.windows.com"
    private static let maximumFormSize = 8192

    let registry: WNSRegistry
    let tokens: AccessTokenIssuer
    let faults: FaultInjector
    let recorder: DeliveryRecorder

    func register(on router: Router<ConnectionRequestContext>) {
        router.post("wns/token") { request, _ in try await token(request) }
        router.post("wns/channels/{channelId}") { request, context in
            try await notify(request, channelId: context.parameters.get("channelId") ?? "", context: context)
        }
        router.delete("wns/channels/{channelId}") { request, context in
            try await notify(request, channelId: context.parameters.get("channelId") ?? "", context: context)
        }
    }

    // MARK: OAuth token endpoint

    private struct TokenRequest: Decodable {
        let grantType: String?
        let clientId: String?
        let clientSecret: String?
        let scope: String?

        private enum CodingKeys: String, CodingKey {
            case grantType = "grant_type", clientId = "client_id", clientSecret = "client_secret", scope
        }
    }

    private func token(_ request: Request) async throws -> Response {
        do {
            guard let form = try await request.form(TokenRequest.self, limit: Self.maximumFormSize) else {
                throw OAuthError("invalid_request", "The request body must be application/x-www-form-urlencoded.")
            }
            guard form.grantType == "client_credentials" else {
                throw OAuthError(
                    "unsupported_grant_type",
                    "The provided value for the input parameter 'grant_type' is not valid."
                )
            }
            guard form.scope == Self.scope else {
                throw OAuthError("invalid_scope", "The provided value for the input parameter 'scope' is not valid.")
            }
            guard let clientId = form.clientId, let app = registry.app(clientId: clientId),
                form.clientSecret == app.clientSecret
            else { throw OAuthError("invalid_client", "Invalid client id or client secret.") }
            return OAuthTokenResponse.granted(tokens.issue(for: app.clientId), expiresIn: tokens.lifetime, tokenType: "bearer")
        } catch let error as OAuthError {
            return error.response
        }
    }

    // MARK: Channels

    /// Token, channel, injected faults, then headers and body (POST) or `X-WNS-Match` (DELETE), and the record.
    private func notify(_ request: Request, channelId: String, context: ConnectionRequestContext) async throws -> Response {
        do {
            let clientId: String
            switch tokens.lookup(authorization: request.headers[.authorization]) {
            case .valid(let subject): clientId = subject
            case .expired: throw WNSError.expiredToken
            case .unknown: throw WNSError.invalidToken
            }
            guard let channel = registry.channel(id: channelId) else { throw WNSError.channelNotFound }
            guard !channel.expired else { throw WNSError.channelExpired }
            guard channel.clientId.map({ $0 == clientId }) ?? true else { throw WNSError.notAuthorized }
            switch try await faults.apply(
                provider: Self.provider,
                token: Substring(channelId),
                connection: context.connection,
                recorder: recorder
            ) {
            case .proceed: break
            case .dropped: return Response(status: .serviceUnavailable)  // never delivered: the connection is gone
            case .fail(let fault):
                let error = WNSError(status: fault.status ?? 500, description: fault.reason ?? "")
                return reject(error, channelId: channelId, retryAfter: fault.retryAfter)
            }
            var payload: [UInt8] = []
            if request.method == .delete {
                try WNSRequestValidator.validateMatch(request.headers[.wnsMatch])
                payload.append(contentsOf: "null".utf8)
            } else {
                let type = try WNSRequestValidator.validateHeaders(request.headers)
                let body = try await request.bodyBytes(limit: WNSRequestValidator.maximumPayloadSize)
                JSONText.appendQuoted(try WNSRequestValidator.validatePayload(body, type: type), to: &payload)
            }
            recorder.recordDelivery(
                provider: Self.provider,
                deviceToken: channelId,
                headers: WNSRequestValidator.recordedHeaders(request.headers),
                payload: payload,
                authenticatedAs: clientId
            )
            var headers: HTTPFields = [.wnsStatus: "received", .wnsMessageID: WNSRequestValidator.messageID()]
            if request.headers[.wnsRequestForStatus]?.lowercased() == "true" {
                headers[.wnsDeviceConnectionStatus] = "connected"
            }
            return Response(status: .ok, headers: headers)
        } catch let error as WNSError {
            return reject(error, channelId: channelId)
        }
    }

    private func reject(_ error: WNSError, channelId: String, retryAfter: String? = nil) -> Response {
        recorder.recordRejection(
            provider: Self.provider,
            deviceToken: channelId,
            status: error.status,
            reason: error.description
        )
        return error.response(retryAfter: retryAfter)
    }
}
