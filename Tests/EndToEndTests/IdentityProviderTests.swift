import Foundation
import NotifyModels
import NotifyTestSupport
import Testing

extension EndToEndTests {
    /// Users signed in with an identity provider: the provider is the sandbox (`/idp/{name}`, its control port, the one
    /// plain-http address the stack's ingest may read providers from), and its keys and tokens are made by PyJWT.
    @Suite("identity providers' tokens")
    struct IdentityProviderTests {
        private struct Minted: Decodable {
            var keySets: [String: JSONValue]
            var tokens: [String: String]
        }

        private struct SubscriptionListing: Decodable {
            struct Listed: Decodable {
                var subscriptionId: String
            }

            var subscriptions: [Listed]
        }

        private struct ProviderLog: Decodable {
            var discoveryRequests: Int
            var keySetRequests: Int
        }

        /// Keys, key sets and tokens made by `Python/identity_tokens.py` (PyJWT) from `plan`.
        private static func mint(_ plan: JSONValue) async throws -> Minted {
            let python = try #require(
                ProcessInfo.processInfo.environment["NOTIFY_TEST_PYTHON"], "NOTIFY_TEST_PYTHON (a Python with PyJWT) is set by deploy/local/test.sh")
            let run = try await Scripts.runProgram(
                python, ["\(Stack.root)/Tests/EndToEndTests/Python/identity_tokens.py", String(decoding: try JSONEncoder().encode(plan), as: UTF8.self)])
            guard run.status == 0 else { throw TestFailure("identity_tokens.py exited \(run.status): \(run.output)") }
            return try JSONDecoder().decode(Minted.self, from: Data(run.output.utf8))
        }

        /// Stores a key set as the sandbox provider `name`'s.
        private static func publish(_ keySet: JSONValue?, as name: String) async throws {
            let stored = try await StackClient.send(.PUT, "\(Stack.sandboxURL)/idp/\(name)/jwks", json: try JSONEncoder().encode(try #require(keySet)))
            guard stored.status == 204 else { throw TestFailure("PUT /idp/\(name)/jwks answered \(stored.status): \(stored.text)") }
        }

        private static func log(of name: String) async throws -> ProviderLog {
            try await StackClient.send(.GET, "\(Stack.sandboxURL)/idp/\(name)/log").decode(ProviderLog.self)
        }

        private static func setProvider(_ app: TestApp, _ json: String) async throws -> HTTPAnswer {
            try await StackClient.send(
                .PATCH, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken, json: Data(#"{"identityProvider":\#(json)}"#.utf8))
        }

        private static func subscriptions(_ token: String, app: TestApp?) async throws -> HTTPAnswer {
            try await StackClient.send(
                .GET, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: token, headers: app.map { [IdentityProvider.appIdHeader: $0.appId] } ?? [:])
        }

        private static func claims(_ values: [String: String]) -> JSONValue {
            .object(values.mapValues { .string($0) })
        }

        @Test("tokens the app's OpenID Connect provider signed (RS256, ES256) are user tokens of the app, a rotated key is fetched when a token names it; another issuer's, an expired, a wrong audience's and a forged token are refused 401")
        func providerTokensAreUserTokens() async throws {
            let app = try await TestApp.create()
            let name = "idp-\(uniqueSuffix())"
            let issuer = "\(Stack.sandboxURL)/idp/\(name)"
            let audience = "notify-\(uniqueSuffix())"
            let user = "user-\(uniqueSuffix())"
            let mine = Self.claims(["iss": issuer, "aud": audience, "sub": user])
            func token(_ key: String, _ claims: JSONValue = mine, kid: String? = nil, expiresIn: Int = 3600, notBeforeIn: Int? = nil) -> JSONValue {
                var spec: [String: JSONValue] = ["key": .string(key), "claims": claims, "expiresIn": .number(Double(expiresIn))]
                if let kid { spec["kid"] = .string(kid) }
                if let notBeforeIn { spec["notBeforeIn"] = .number(Double(notBeforeIn)) }
                return .object(spec)
            }
            var tokens: [String: JSONValue] = [
                "first": token("rsa-first"),
                "rotated": token("ec-rotated"),
                "otherIssuer": token("rsa-first", Self.claims(["iss": "\(Stack.sandboxURL)/idp/other-\(name)", "aud": audience, "sub": user])),
                "wrongAudience": token("rsa-first", Self.claims(["iss": issuer, "aud": "another-client", "sub": user])),
                "expired": token("rsa-first", expiresIn: -300),
                "notYetValid": token("rsa-first", notBeforeIn: 600),
                "forged": token("rsa-forger", kid: "rsa-first"),
            ]
            for index in 0..<10 { tokens["unknownKey\(index)"] = token("rsa-forger", kid: "made-up-\(index)") }
            let minted = try await Self.mint(.object([
                "keys": .object(["rsa-first": .string("RS256"), "ec-rotated": .string("ES256"), "rsa-forger": .string("RS256")]),
                "keySets": .object(["before": .array([.string("rsa-first")]), "after": .array([.string("rsa-first"), .string("ec-rotated")])]),
                "tokens": .object(tokens),
            ]))
            try await Self.publish(minted.keySets["before"], as: name)

            let set = try await Self.setProvider(app, #"{"issuer":"\#(issuer)","audience":"\#(audience)"}"#)
            #expect(set.status == 200, "\(set.text)")
            let shown = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken).decode(AppView.self)
            #expect(shown.identityProvider == IdentityProvider(issuer: issuer, audience: audience), "as stored: \(String(describing: shown.identityProvider))")

            // A device registers with the provider's token, naming the app; the app server's publish to the user reaches it.
            let first = try #require(minted.tokens["first"])
            let pushToken = randomHex(bytes: 32)
            let registered = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: first, json: try StackClient.encode(SubscriptionRequest(platform: .apns, pushToken: pushToken)),
                headers: [IdentityProvider.appIdHeader: app.appId])
            #expect(registered.status == 201 || registered.status == 202, "\(registered.text)")
            let id = try await app.publishAccepted(NotificationRequest.alert(to: user))
            #expect(try await Sandbox.missingNotifications([id], at: pushToken).isEmpty, "the push to the user the token's sub names")
            #expect(try await Self.log(of: name).discoveryRequests >= 1, "the keys were found through the issuer's discovery document")

            // The provider rotates: a token signed with the new key (ES256) makes ingest read the key set again.
            try await Self.publish(minted.keySets["after"], as: name)
            let listed = try await Self.subscriptions(try #require(minted.tokens["rotated"]), app: app)
            #expect(listed.status == 200, "a token of the rotated key: \(listed.text)")
            #expect(try listed.decode(SubscriptionListing.self).subscriptions.count == 1, "the same user's device: \(listed.text)")

            for (refused, what) in [
                ("otherIssuer", "another issuer's token"), ("wrongAudience", "a token for another audience"), ("expired", "a token expired 5 minutes ago"),
                ("notYetValid", "a token valid only in 10 minutes"), ("forged", "a token signed by another key under the provider's kid"),
            ] {
                expectAPIError(try await Self.subscriptions(try #require(minted.tokens[refused]), app: app), status: 401, field: "Authorization", what)
            }
            expectAPIError(
                try await Self.subscriptions(first, app: nil), status: 401, field: IdentityProvider.appIdHeader, "a provider's token without the app's id")

            // Tokens naming keys the provider never had cost at most one more read of its key set, not one each.
            let before = try await Self.log(of: name).keySetRequests
            for index in 0..<10 {
                expectAPIError(
                    try await Self.subscriptions(try #require(minted.tokens["unknownKey\(index)"]), app: app), status: 401, field: "Authorization",
                    "a token naming an unknown key")
            }
            let after = try await Self.log(of: name).keySetRequests
            #expect(after - before <= 1, "ten tokens with unknown keys read the key set \(after - before) times")
        }

        @Test("a key set named directly with a claim of the app's choice as the user id; the app's own HS256 tokens still work; removing the provider refuses its tokens")
        func keySetURLAndUserIdClaim() async throws {
            let app = try await TestApp.create()
            let name = "idp-\(uniqueSuffix())"
            // Never read: with a key set URL the issuer is only what tokens' iss must be.
            let issuer = "https://accounts.notify.test/\(name)"
            let email = "\(name)@example.com"
            let minted = try await Self.mint(.object([
                "keys": .object(["ec-only": .string("ES256")]),
                "keySets": .object(["only": .array([.string("ec-only")])]),
                "tokens": .object([
                    "email": .object(["key": .string("ec-only"), "claims": Self.claims(["iss": issuer, "aud": "web-client", "sub": "opaque-1", "email": email])]),
                ]),
            ]))
            try await Self.publish(minted.keySets["only"], as: name)
            let set = try await Self.setProvider(
                app, #"{"issuer":"\#(issuer)","jwksUrl":"\#(Stack.sandboxURL)/idp/\#(name)/jwks","audience":"web-client","userIdClaim":"email"}"#)
            #expect(set.status == 200, "\(set.text)")

            let token = try #require(minted.tokens["email"])
            let pushToken = randomHex(bytes: 32)
            let registered = try await StackClient.send(
                .POST, "\(Stack.ingestURL)/v1/me/subscriptions", bearer: token, json: try StackClient.encode(SubscriptionRequest(platform: .apns, pushToken: pushToken)),
                headers: [IdentityProvider.appIdHeader: app.appId])
            #expect(registered.status == 201 || registered.status == 202, "\(registered.text)")
            let listed = try await Self.subscriptions(try await app.userToken(email), app: app)
            #expect(try listed.decode(SubscriptionListing.self).subscriptions.count == 1, "the device is the user the email claim names: \(listed.text)")
            #expect(try await Self.log(of: name).discoveryRequests == 0)

            let removed = try await Self.setProvider(app, "null")
            #expect(removed.status == 200 && removed.text.contains(#""identityProvider":null"#), "\(removed.text)")
            expectAPIError(try await Self.subscriptions(token, app: app), status: 401, field: "Authorization", "a provider's token once the app names none")
        }

        @Test("an issuer or key set URL that is not https (but for the sandbox the stack admits), or a missing audience, is refused naming the field")
        func providerSettingsAreChecked() async throws {
            let app = try await TestApp.create()
            for (json, code, field) in [
                (#"{"issuer":"http://127.0.0.1:1/idp","audience":"a"}"#, "invalid_field", "identityProvider.issuer"),
                (#"{"issuer":"ftp://accounts.notify.test","audience":"a"}"#, "invalid_field", "identityProvider.issuer"),
                (#"{"issuer":"https://accounts.notify.test","jwksUrl":"keys.json","audience":"a"}"#, "invalid_field", "identityProvider.jwksUrl"),
                (#"{"issuer":"https://accounts.notify.test"}"#, "missing_field", "identityProvider.audience"),
                (#"{"issuer":"https://accounts.notify.test","audience":7}"#, "invalid_field", "identityProvider.audience"),
            ] {
                expectAPIError(try await Self.setProvider(app, json), status: 400, code: code, field: field, json)
            }
        }
    }
}
