import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import NotifyModels
import Testing

@testable import IngestCore

/// A device's calls with an identity provider's token, in-process: the app named by `X-Notify-App-Id`, the claims and
/// the signature checked, and the app's setting refused when wrong. A registration with a push token that is not one
/// answers 400 only once the caller was authenticated, so it tells an accepted token from a refused one (401) without
/// a database.
@Suite struct IdentityProviderRouteTests {
    private static let key = ES256PrivateKey()
    private static let appHeader = HTTPField.Name(IdentityProvider.appIdHeader)!
    private static let badRegistration = ByteBuffer(string: #"{"platform":"apns","pushToken":"not-a-token"}"#)

    private static func claims(_ values: [String: JSONValue] = [:]) -> IdentityProviderToken.Claims {
        let provider = FixedApp.identityProvider
        var all: [String: JSONValue] = [
            "iss": .string(provider.issuer), "aud": .string(provider.audience), "sub": .string("alice"),
            "exp": .number(Date().timeIntervalSince1970 + 300),
        ]
        all.merge(values) { $1 }
        return IdentityProviderToken.Claims(all)
    }

    private static func token(_ claims: IdentityProviderToken.Claims = claims(), key: ES256PrivateKey = key, kid: String = "k1") async throws -> String {
        try await JWTKeyCollection().add(ecdsa: key, kid: JWKIdentifier(string: kid)).sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// RouteTesting with the provider's discovery document and key set (the test's key) served.
    private static func testing() throws -> RouteTesting {
        let testing = RouteTesting()
        let issuer = FixedApp.identityProvider.issuer
        try testing.documents.store(["issuer": issuer, "jwks_uri": "\(issuer)/keys"], at: "\(issuer)/.well-known/openid-configuration")
        try testing.documents.store(["keys": [try IdentityProviderKeysTests.jwk(key, kid: "k1")]], at: "\(issuer)/keys")
        return testing
    }

    private static func register(_ client: some TestClientProtocol, token: String, app: String?) async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        if let app { headers[appHeader] = app }
        return try await client.execute(uri: "/v1/me/subscriptions", method: .post, headers: headers, body: badRegistration)
    }

    @Test("a token of the app's provider, naming the app, authenticates its user; refused 401 without the app's name, for an app without a provider, another issuer's, expired, for another audience, forged or naming a key the provider lacks")
    func providerTokens() async throws {
        let accepted = try await Self.token()
        let refused: [(String, String?, String)] = [
            (accepted, nil, IdentityProvider.appIdHeader),
            (accepted, RouteTesting.appId, "Authorization"),
            (try await Self.token(Self.claims(["iss": .string("https://idp.notify.test/other")])), FixedApp.identityProviderAppId, "Authorization"),
            (try await Self.token(Self.claims(["exp": .number(Date().timeIntervalSince1970 - 120)])), FixedApp.identityProviderAppId, "Authorization"),
            (try await Self.token(Self.claims(["aud": .string("web-client")])), FixedApp.identityProviderAppId, "Authorization"),
            (try await Self.token(key: ES256PrivateKey()), FixedApp.identityProviderAppId, "Authorization"),
            (try await Self.token(key: ES256PrivateKey(), kid: "k2"), FixedApp.identityProviderAppId, "Authorization"),
        ]
        try await Self.testing().run { client in
            let response = try await Self.register(client, token: accepted, app: FixedApp.identityProviderAppId)
            #expect(response.status == .badRequest, "\(String(buffer: response.body))")
            #expect(try ErrorBody(response).error.field == "pushToken")
            for (token, app, field) in refused {
                let response = try await Self.register(client, token: token, app: app)
                #expect(response.status == .unauthorized, "\(String(buffer: response.body))")
                #expect(try ErrorBody(response).error.field == field)
            }
        }
    }

    @Test("the app's own HS256 token is taken with or without X-Notify-App-Id, but not when it names another app")
    func appTokensWithTheHeader() async throws {
        let token = try await RouteTesting.userToken("alice")
        try await RouteTesting().run { client in
            for app in [nil, RouteTesting.appId] {
                let response = try await Self.register(client, token: token, app: app)
                #expect(response.status == .badRequest, "\(String(buffer: response.body))")
            }
            let other = try await Self.register(client, token: token, app: FixedApp.externalBadgeAppId)
            #expect(other.status == .unauthorized)
            #expect(try ErrorBody(other).error.field == IdentityProvider.appIdHeader)
        }
    }

    @Test("when the provider's keys cannot be read, its tokens are answered 503 identity_provider_unavailable with Retry-After")
    func unreachableProvider() async throws {
        let token = try await Self.token()
        try await RouteTesting().run { client in
            let response = try await Self.register(client, token: token, app: FixedApp.identityProviderAppId)
            #expect(response.status == .serviceUnavailable)
            #expect(try ErrorBody(response).error.code == "identity_provider_unavailable")
            #expect(response.headers[.retryAfter].flatMap(Int.init).map { (1...30).contains($0) } == true)
        }
    }

    @Test("an identity provider whose issuer or key set is not an https URL, or without an audience, is refused naming the field", arguments: [
        (#"{"identityProvider":{"issuer":"http://idp.notify.test","audience":"a"}}"#, "identityProvider.issuer"),
        (#"{"identityProvider":{"issuer":"https://idp.notify.test?tenant=1","audience":"a"}}"#, "identityProvider.issuer"),
        (#"{"identityProvider":{"issuer":"https://user:secret@idp.notify.test","audience":"a"}}"#, "identityProvider.issuer"),
        (#"{"identityProvider":{"issuer":"https://idp.notify.test","jwksUrl":"/keys","audience":"a"}}"#, "identityProvider.jwksUrl"),
        (#"{"identityProvider":{"issuer":"https://idp.notify.test","audience":""}}"#, "identityProvider.audience"),
        (#"{"identityProvider":{"issuer":"https://idp.notify.test"}}"#, "identityProvider.audience"),
        (#"{"identityProvider":{"issuer":"https://idp.notify.test","audience":"a","userIdClaim":""}}"#, "identityProvider.userIdClaim"),
        (#"{"identityProvider":{"audience":"a"}}"#, "identityProvider.issuer"),
    ])
    func settingIsChecked(body: String, field: String) async throws {
        try await RouteTesting().run { client in
            let response = try await client.execute(
                uri: "/v1/apps/\(RouteTesting.appId)", method: .patch, headers: [.authorization: "Bearer \(RouteTesting.adminToken)"],
                body: ByteBuffer(string: body))
            #expect(response.status == .badRequest)
            #expect(try ErrorBody(response).error.field == field, "\(String(buffer: response.body))")
        }
    }
}
