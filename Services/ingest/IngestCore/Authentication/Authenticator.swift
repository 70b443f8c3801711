import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NotifyModels

/// The three kinds of caller: the operator (admin token), an app server (API key), a device (user token: the app's
/// own HS256 one, or its identity provider's).
struct Authenticator: Sendable {
    let adminToken: String
    let apps: AppDirectory
    /// The keys that check identity providers' tokens.
    let identityKeys: IdentityProviderKeys
    let logger: Logger
    /// Notes each use of a scoped API key, for its `lastUsedAt`.
    var keyUses = APIKeyUseRecorder()

    /// A device's identity from its user token.
    struct User: Sendable {
        var appId: String
        var userId: String
    }

    func requireOperator(_ request: Request) throws {
        guard let token = bearerToken(request), Self.constantTimeEquals(token, adminToken) else {
            throw APIFailure.unauthorized("the operator token is missing or wrong")
        }
    }

    /// Answers 401 for a missing or wrong key, 404 for an unknown app, and 403 for a scoped key whose scope does not
    /// cover `permission`.
    func requireAppServer(_ request: Request, appId: String, for permission: APIKeyScope) async throws -> AppDirectory.App {
        guard let key = bearerToken(request) else { throw APIFailure.unauthorized("an API key is required: Authorization: Bearer <apiKey>") }
        guard var app = try await lookUp(appId) else {
            throw APIFailure(.notFound, code: "app_not_found", message: "no app with id \(appId)", field: "appId")
        }
        var access = app.access(for: key)
        if access == nil {
            // A key rotated or created through another instance is not in this one's cached copy yet.
            guard let recent = try await lookUp(appId, recent: true), let recentAccess = recent.access(for: key) else {
                throw APIFailure.unauthorized("the API key is not valid for this app")
            }
            (app, access) = (recent, recentAccess)
        }
        if case .scoped(let keyId, let scope) = access {
            keyUses.record(appId: appId, keyId: keyId)
            guard scope.allows(permission) else {
                throw APIFailure(
                    .forbidden, code: "forbidden", message: "this API key (\(keyId)) may only \(scope.inWords); this needs a key that may \(permission.inWords)",
                    field: "Authorization")
            }
        }
        return app
    }

    /// The device's user: from a token the app signed (its `aud` names the app, and `X-Notify-App-Id`, if sent, must
    /// name the same), or one its identity provider signed (`X-Notify-App-Id` names the app).
    func requireUser(_ request: Request) async throws -> User {
        guard let token = bearerToken(request) else { throw APIFailure.unauthorized("a user token is required: Authorization: Bearer <jwt>") }
        let namedApp = request.headers[Self.appIdHeader]
        let claims: UserToken.Claims
        do {
            if try UserToken.signer(of: token) == .identityProvider {
                return try await identityProviderUser(token, appId: namedApp)
            }
            claims = try UserToken.unverifiedClaims(token)
        } catch let error as UserToken.Invalid {
            throw APIFailure.unauthorized("the user token is malformed: \(error.message)")
        }
        if let namedApp, namedApp != claims.appId {
            throw APIFailure(
                .unauthorized, code: "unauthorized", message: "the user token is for another app than X-Notify-App-Id names",
                field: Self.appIdHeader.rawName)
        }
        guard let app = try await lookUp(claims.appId) else { throw APIFailure.unauthorized("the user token names an unknown app") }
        do {
            try await app.verifyUserToken(token)
        } catch {
            // A signing key rotated through another instance is not in this one's cached copy yet.
            let recent = try await lookUp(claims.appId, recent: true) ?? app
            do {
                try await recent.verifyUserToken(token)
            } catch {
                throw APIFailure.unauthorized("the user token is not valid: \(error.message)")
            }
        }
        return User(appId: app.appId, userId: claims.subject)
    }

    /// A token of the identity provider of the app `X-Notify-App-Id` names: its claims checked against the app's
    /// provider (before any key is fetched, so a token of another issuer costs no fetch), then its signature with the
    /// provider's keys. 503 when the provider's keys cannot be read and none were read before.
    private func identityProviderUser(_ token: String, appId: String?) async throws -> User {
        guard let appId else {
            throw APIFailure(
                .unauthorized, code: "unauthorized",
                message: "a token of an identity provider needs the header X-Notify-App-Id naming the app", field: Self.appIdHeader.rawName)
        }
        guard let app = try await lookUp(appId) else { throw APIFailure.unauthorized("X-Notify-App-Id names an unknown app") }
        guard let provider = app.identityProvider else {
            throw APIFailure.unauthorized("the app takes no identity provider's tokens: sign user tokens HS256 with its client signing key")
        }
        do {
            let unverified = try IdentityProviderToken.read(token)
            let userId = try IdentityProviderToken.check(unverified.claims, against: provider)
            let keySet = try await identityKeys.keySet(of: provider, holding: unverified.keyId)
            if let keyId = unverified.keyId {
                guard keySet.keyIds.contains(keyId) else {
                    throw APIFailure.unauthorized("the user token is not valid: its key (kid \(keyId)) is not in the identity provider's key set")
                }
            } else if keySet.keyIds.count != 1 {
                throw APIFailure.unauthorized("the user token is not valid: it names no key (kid), and the identity provider has several")
            }
            try await IdentityProviderToken.verifySignature(token, with: keySet.keys)
            return User(appId: app.appId, userId: userId)
        } catch let error as UserToken.Invalid {
            throw APIFailure.unauthorized("the user token is not valid: \(error.message)")
        } catch let error as IdentityProviderKeys.Unavailable {
            throw APIFailure(
                .serviceUnavailable, code: "identity_provider_unavailable", message: error.description, retryAfterSeconds: error.retryAfterSeconds)
        }
    }

    /// The app the operator names: 404 naming appId when there is none, 503 when the database does not answer.
    func existingApp(_ appId: String) async throws -> AppDirectory.App {
        guard let app = try await lookUp(appId) else {
            throw APIFailure(.notFound, code: "app_not_found", message: "no app with id \(appId)", field: "appId")
        }
        return app
    }

    private func lookUp(_ appId: String, recent: Bool = false) async throws -> AppDirectory.App? {
        do {
            return try await recent ? apps.recentApp(appId) : apps.app(appId)
        } catch {
            logger.warning("app lookup failed", metadata: ["error": "\(String(reflecting: error))"])
            throw APIFailure.databaseUnavailable
        }
    }

    private func bearerToken(_ request: Request) -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        // Trimmed by hand: Foundation's CharacterSet trimming was about 4 % of ingest's CPU per request.
        var token = parts[1]
        while token.first?.isWhitespace == true { token.removeFirst() }
        while token.last?.isWhitespace == true { token.removeLast() }
        return String(token)
    }

    /// Names the app of a user token that does not name it itself.
    static let appIdHeader = HTTPField.Name(IdentityProvider.appIdHeader)!

    static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8), right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
