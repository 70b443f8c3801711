import Foundation
import HTTPTypes
import Hummingbird
import _CryptoExtras

/// Firebase Cloud Messaging HTTP v1 under `/fcm`, answered as Google answers it:
/// `POST /fcm/token` plays oauth2.googleapis.com/token (the RS256 JWT-bearer grant of a service
/// account), `POST /fcm/v1/projects/{project}/messages:send` plays fcm.googleapis.com.
struct FCMEndpoint: Sendable {
    static let provider = "fcm"
    /// The FCM `errorCode` a fault answers when it names none.
    static let faultReasons = [
        400: "INVALID_ARGUMENT", 401: "THIRD_PARTY_AUTH_ERROR", 403: "SENDER_ID_MISMATCH", 404: "UNREGISTERED",
        429: "QUOTA_EXCEEDED", 500: "INTERNAL", 503: "UNAVAILABLE",
    ]
    /// Either scope lets a token send messages.
    private static let scopes: Set = [
        "https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/cloud-platform",
    ]
    private static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// Longest assertion lifetime (`exp - iat`) Google accepts, and the clock skew it tolerates.
    private static let maximumAssertionLifetime = 3600
    private static let clockSkew = 60
    private static let maximumRequestSize = 1 << 20

    let accounts: FCMServiceAccounts
    let tokens: AccessTokenIssuer
    /// This sandbox's token URL: what service-account key files name as `token_uri`, and the
    /// audience an assertion must have.
    let tokenURI: String
    let faults: FaultInjector
    let recorder: DeliveryRecorder

    func register(on router: Router<ConnectionRequestContext>) {
        router.post("fcm/token") { request, _ in try await token(request) }
        router.post("fcm/v1/projects/{project}/messages:send") { request, context in
            try await send(request, project: context.parameters.get("project") ?? "", context: context)
        }
    }

    // MARK: OAuth token endpoint

    private struct TokenRequest: Decodable {
        let grantType: String?
        let assertion: String?

        private enum CodingKeys: String, CodingKey {
            case grantType = "grant_type", assertion
        }
    }

    private struct AssertionHeader: Decodable {
        let alg: String?
        let kid: String?
    }

    private struct AssertionClaims: Decodable {
        let iss: String?
        let aud: String?
        let scope: String?
        let iat: Int?
        let exp: Int?
    }

    /// Exchanges a signed assertion for an access token valid one hour.
    private func token(_ request: Request) async throws -> Response {
        do {
            guard let form = try await request.form(TokenRequest.self, limit: Self.maximumRequestSize) else {
                throw OAuthError("invalid_request", "The request body must be application/x-www-form-urlencoded.")
            }
            guard form.grantType == Self.grantType else {
                throw OAuthError("unsupported_grant_type", "Invalid grant_type: \(form.grantType ?? "")")
            }
            guard let assertion = form.assertion, !assertion.isEmpty else {
                throw OAuthError("invalid_request", "Missing required parameter: assertion")
            }
            let account = try verify(assertion)
            let token = tokens.issue(for: account.clientEmail)
            return OAuthTokenResponse.granted(token, expiresIn: tokens.lifetime, tokenType: "Bearer")
        } catch let error as OAuthError {
            return error.response
        }
    }

    /// Checks the assertion as Google does: RS256 signature by the account named in `iss` (and
    /// `kid`, if given, its key id), audience, lifetime at most an hour around now, and scope.
    private func verify(_ assertion: String) throws(OAuthError) -> FCMServiceAccount {
        let badSignature = OAuthError("invalid_grant", "Invalid JWT Signature.")
        guard let jwt = CompactJWT(assertion), let header = jwt.header(as: AssertionHeader.self),
            let claims = jwt.claims(as: AssertionClaims.self)
        else { throw OAuthError("invalid_grant", "Invalid JWT: the assertion is not a signed JWT.") }
        guard let email = claims.iss, let account = accounts.account(email: email) else {
            throw OAuthError("invalid_grant", "Invalid grant: account not found")
        }
        guard header.alg == "RS256", header.kid.map({ $0 == account.privateKeyId }) ?? true,
            let publicKey = try? _RSA.Signing.PublicKey(pemRepresentation: account.publicKey),
            publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: jwt.signature),
                for: jwt.signingInput,
                padding: .insecurePKCS1v1_5
            )
        else { throw badSignature }
        guard claims.aud == tokenURI else {
            throw OAuthError("invalid_grant", "Invalid JWT: Failed audience check. The right audience is \(tokenURI)")
        }
        let now = Int(Date.now.timeIntervalSince1970)
        guard let issuedAt = claims.iat, let expiry = claims.exp, issuedAt < expiry,
            expiry - issuedAt <= Self.maximumAssertionLifetime,
            issuedAt <= now + Self.clockSkew, expiry >= now - Self.clockSkew
        else {
            throw OAuthError(
                "invalid_grant",
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                    + "Check your iat and exp values in the JWT claim."
            )
        }
        guard let scope = claims.scope, !Self.scopes.isDisjoint(with: scope.split(separator: " ").map(String.init)) else {
            throw OAuthError("invalid_scope", "Invalid OAuth scope or ID token audience provided.")
        }
        return account
    }

    // MARK: Send endpoint

    /// Bearer token of the project's service account, the message, injected faults, then the record.
    private func send(_ request: Request, project: String, context: ConnectionRequestContext) async throws -> Response {
        var token = ""
        do {
            guard case .valid(let email) = tokens.lookup(authorization: request.headers[.authorization]) else {
                throw FCMError.unauthenticated
            }
            guard accounts.account(email: email)?.projectId == project else {
                throw FCMError.permissionDenied(project: project)
            }
            let body = try await request.bodyBytes(limit: Self.maximumRequestSize)
            guard body.count <= Self.maximumRequestSize else {
                throw FCMError.invalidArgument("Request payload size exceeds the limit: \(Self.maximumRequestSize) bytes.")
            }
            let send = try FCMRequestValidator.validate(body)
            token = send.token
            switch try await faults.apply(
                provider: Self.provider,
                token: Substring(token),
                connection: context.connection,
                recorder: recorder
            ) {
            case .proceed: break
            case .dropped: return Response(status: .serviceUnavailable)  // never delivered: the connection is gone
            case .fail(let fault): return reject(FCMError(fault: fault), token: token, retryAfter: fault.retryAfter)
            }
            if !send.validateOnly {
                recorder.recordDelivery(
                    provider: Self.provider,
                    deviceToken: token,
                    headers: RecordedHeaders(request.headers) { name in
                        name == "content-type" || name.hasPrefix("x-goog-") || name.hasPrefix("x-firebase-")
                    },
                    payload: Array(send.message.utf8),
                    authenticatedAs: email
                )
            }
            let messageId = send.validateOnly
                ? "fake_message_id"
                : "0:\(Int64(Date.now.timeIntervalSince1970 * 1000))%\(String(UInt64.random(in: .min ... .max), radix: 16))"
            return Response(
                status: .ok,
                headers: [.contentType: "application/json; charset=UTF-8"],
                body: ResponseBody(
                    byteBuffer: ByteBuffer(string: "{\"name\":\(JSONText.quoted("projects/\(project)/messages/\(messageId)"))}")
                )
            )
        } catch let error as FCMError {
            return reject(error, token: token)
        }
    }

    private func reject(_ error: FCMError, token: String, retryAfter: String? = nil) -> Response {
        recorder.recordRejection(
            provider: Self.provider,
            deviceToken: token,
            status: error.status,
            reason: error.errorCode ?? error.googleStatus
        )
        return error.response(retryAfter: retryAfter)
    }
}
