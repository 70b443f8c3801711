import Crypto
import Foundation
import Hummingbird
import NotifyModels
import NotifyStore

/// The operator's calls (operator token): `POST /v1/apps`, `PATCH` and `DELETE /v1/apps/{appId}`,
/// `POST /v1/apps/{appId}/broker-credentials` and `PUT /v1/apps/{appId}/providers/{provider}`.
struct OperatorRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility
    let store: any AppStore
    let sender: CommandSender
    /// Apps' broker users, which storage creates in RabbitMQ.
    let brokerAccess: BrokerAccess
    /// Seals the secrets stored for apps (signing keys, provider credentials) before they leave this process.
    let keyring: SecretKeyring
    let outbound: OutboundURLCheck

    private struct CreateAppRequest: Decodable {
        var name: String?
        /// Creates the app's RabbitMQ user, so its servers can publish to `notify.ingest`.
        var brokerAccess: Bool?
        /// Refused: the service creates broker users itself now.
        var brokerUser: String?
        /// Default `unread`.
        var badgeMode: BadgeMode?
    }

    private struct RotateRequest: Decodable {
        /// How long the app's current broker users stay accepted.
        var overlapSeconds: Int?
    }

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/apps") { request, _ in try await createApp(request) }
        router.delete("/v1/apps/:appId") { request, context in try await deleteApp(request, appId: try context.parameters.require("appId")) }
        router.patch("/v1/apps/:appId") { request, context in try await changeSettings(request, appId: try context.parameters.require("appId")) }
        router.post("/v1/apps/:appId/broker-credentials") { request, context in
            try await rotateBrokerCredentials(request, appId: try context.parameters.require("appId"))
        }
        router.put("/v1/apps/:appId/providers/:provider") { request, context in
            try await setProvider(request, appId: try context.parameters.require("appId"), provider: try context.parameters.require("provider"))
        }
    }

    private func createApp(_ request: Request) async throws -> Response {
        try authenticator.requireOperator(request)
        let body = try await JSONResponse.decode(CreateAppRequest.self, from: request)
        guard let name = body.name, !name.isEmpty, name.utf8.count <= 200 else {
            throw APIFailure(ValidationError.invalid("name", "name is required (1 to 200 bytes)"))
        }
        if body.brokerUser != nil {
            throw APIFailure(ValidationError.invalid(
                "brokerUser", "brokerUser is no longer accepted: set \"brokerAccess\": true and the service creates the app's broker user"))
        }
        let appId = "app_" + Self.randomToken(bytes: 9)
        let apiKey = "nk_" + Self.randomToken(bytes: 32)
        let signingKey = Self.randomToken(bytes: 32)
        let now = Date()
        let app = AppRecord(
            appId: appId, name: name, apiKeyHash: AppDirectory.hashAPIKey(apiKey),
            clientSigningKey: keyring.seal(signingKey, for: .clientSigningKey(appId: appId)),
            brokerUser: nil, createdAt: now, badgeMode: body.badgeMode ?? .unread)
        let created = StorageCommand(action: .createApp(app))
        var broker: BrokerCredentials?
        let stored: Bool
        if body.brokerAccess == true {
            // The app and its user in one message, answered once storage created the user (and so the app). If it did not
            // in time, the app is deleted again: its keys were never answered.
            let user = brokerAccess.issue(for: appId, at: now)
            try await brokerAccess.create(
                user.record.user, sending: [created, StorageCommand(action: .putBrokerUser(user.record))],
                undo: [StorageCommand(action: .deleteApp(appId: appId))])
            (broker, stored) = (user.credentials, true)
        } else {
            stored = try await visibility.send(created) { [store] in try await store.apps(after: nil, limit: 1, appId: appId).first } != nil
        }
        return try JSONResponse.make(
            stored ? .created : .accepted,
            CreatedApp(appId: appId, name: name, apiKey: apiKey, clientSigningKey: signingKey, badgeMode: app.badgeMode, broker: broker),
            headers: [.location: "/v1/apps/\(appId)"])
    }

    /// Creates a new broker user for the app and, once storage created it, retires its current ones after an overlap
    /// (default `NOTIFY_BROKER_USER_OVERLAP_SECONDS`), during which both work; the new password is answered once. If the
    /// new user is not created in time, it is retired at once and the current ones stay as they were.
    private func rotateBrokerCredentials(_ request: Request, appId: String) async throws -> Response {
        try authenticator.requireOperator(request)
        let body = try await JSONResponse.decodeOptional(RotateRequest.self, from: request) ?? RotateRequest()
        let overlap = body.overlapSeconds.map(TimeInterval.init) ?? brokerAccess.defaultOverlap
        guard (0...(30 * 86400)).contains(overlap) else {
            throw APIFailure(ValidationError.invalid("overlapSeconds", "overlapSeconds must be between 0 and 2592000 (30 days)"))
        }
        authenticator.apps.forget(appId)
        let app = try await authenticator.existingApp(appId)
        let now = Date()
        let new = brokerAccess.issue(for: appId, at: now)
        let retireNew = [StorageCommand(action: .putBrokerUser(BrokerUserRecord(appId: appId, user: new.record.user, createdAt: now, retiresAt: now)))]
        try await brokerAccess.create(new.record.user, sending: [StorageCommand(action: .putBrokerUser(new.record))], undo: retireNew)
        let retiresAt = now.addingTimeInterval(overlap)
        let retiring = app.brokerUsers.compactMap { user, retires -> RotatedBrokerCredentials.Retiring? in
            let at = min(retires ?? retiresAt, retiresAt)
            return at > now || retires == nil ? .init(user: user, retiresAt: at) : nil
        }.sorted { $0.user < $1.user }
        do {
            try await sender.send(retiring.map {
                StorageCommand(action: .putBrokerUser(BrokerUserRecord(appId: appId, user: $0.user, createdAt: now, retiresAt: $0.retiresAt)))
            })
        } catch {
            // The rotation is not answered: the new user, whose password no one will know, goes.
            try? await sender.send(retireNew)
            throw error
        }
        authenticator.apps.forget(appId)
        return try JSONResponse.make(.created, RotatedBrokerCredentials(broker: new.credentials, retiring: retiring))
    }

    /// Changes the app's settings (badge mode, rate limits, identity provider); answers them as stored.
    private func changeSettings(_ request: Request, appId: String) async throws -> Response {
        try authenticator.requireOperator(request)
        let body = try await JSONResponse.decode(AppSettings.self, from: request)
        guard body.badgeMode != nil || body.rateLimit != nil || body.identityProvider != nil else {
            throw APIFailure(ValidationError.invalid("badgeMode", "name a setting to change: badgeMode, rateLimit or identityProvider"))
        }
        for (field, value) in [("rateLimit.requestsPerSecond", body.rateLimit?.requestsPerSecond), ("rateLimit.notificationsPerSecond", body.rateLimit?.notificationsPerSecond)] {
            if let value, !(1...1_000_000).contains(value) {
                throw APIFailure(ValidationError.invalid(field, "\(field) must be between 1 and 1000000 (leave it out for the service's default)"))
            }
        }
        if let provider = body.identityProvider ?? nil {
            do {
                // Plain http only where the operator admits the host and port (NOTIFY_OUTBOUND_ALLOW): the local sandbox.
                try provider.validate(plainHTTPHosts: outbound.policy.allowance.plainHTTPHosts)
            } catch {
                throw APIFailure(error)
            }
            // The URL that will be read: the key set's when named, else the issuer's discovery document.
            if let jwksUrl = provider.jwksUrl {
                try await outbound.requireCallable(jwksUrl, field: "identityProvider.jwksUrl")
            } else {
                try await outbound.requireCallable(provider.issuer, field: "identityProvider.issuer")
            }
        }
        let app = try await authenticator.existingApp(appId)
        var stored = true
        if let badgeMode = body.badgeMode {
            stored = try await visibility.send(StorageCommand(action: .setBadgeMode(appId: appId, mode: badgeMode))) { [store] in
                try await store.apps(after: nil, limit: 1, appId: appId).first { $0.badgeMode == badgeMode.rawValue }
            } != nil
        }
        if let limit = body.rateLimit {
            stored = try await visibility.send(StorageCommand(action: .setRateLimit(appId: appId, limit))) { [store] in
                try await store.apps(after: nil, limit: 1, appId: appId).first { $0.rateLimit == limit }
            } != nil && stored
        }
        if let change = body.identityProvider {
            stored = try await visibility.send(StorageCommand(action: .setIdentityProvider(appId: appId, change))) { [store] in
                try await store.apps(after: nil, limit: 1, appId: appId).first { $0.identityProvider == change }
            } != nil && stored
        }
        authenticator.apps.forget(appId)
        return try JSONResponse.make(
            stored ? .ok : .accepted,
            AppSettings(
                badgeMode: body.badgeMode ?? app.badgeMode, rateLimit: body.rateLimit ?? app.rateLimit,
                identityProvider: .some(body.identityProvider ?? app.identityProvider)))
    }

    /// Deletes the app and everything stored for it; storage deletes its broker users from RabbitMQ. Answers 204 once
    /// the app and its broker users are gone, 202 when that did not show within the wait.
    private func deleteApp(_ request: Request, appId: String) async throws -> Response {
        try authenticator.requireOperator(request)
        authenticator.apps.forget(appId)
        _ = try await authenticator.existingApp(appId)
        let gone = try await visibility.send([StorageCommand(action: .deleteApp(appId: appId))], thenAwait: { [store] in
            try await store.isGone(appId: appId) ? true : nil
        })
        authenticator.apps.forget(appId)
        return Response(status: gone != nil ? .noContent : .accepted)
    }

    private func setProvider(_ request: Request, appId: String, provider: String) async throws -> Response {
        try authenticator.requireOperator(request)
        guard let platform = Platform(rawValue: provider), Platform.providers.contains(platform) else {
            throw APIFailure(
                .badRequest, code: "unsupported_provider",
                message: "provider must be apns, fcm, wns or webpush (VoIP pushes use the apns credentials)", field: "provider")
        }
        let appPackage = request.uri.queryParameters.get("appPackage").map { String($0) } ?? ""
        guard appPackage.utf8.count <= 200, !appPackage.contains(where: \.isWhitespace) else {
            throw APIFailure(ValidationError.invalid("appPackage", "appPackage is at most 200 bytes without spaces, as the app's devices register it"))
        }
        _ = try await authenticator.existingApp(appId)
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: JSONResponse.maximumBodyBytes)
        } catch {
            throw APIFailure.bodyTooLarge
        }
        let credentials: ProviderCredentials
        do {
            credentials = try ProviderCredentials.decode(platform, from: Data(body.readableBytesView), decoder: RequestBodyDecoder())
            try credentials.validate()
        } catch let error as DecodingError {
            throw APIFailure(DecodingFailure.validationError(error))
        } catch let error as ValidationError {
            throw APIFailure(error)
        }
        try Self.checkKeys(credentials)
        try await outbound.requireCallableEndpoints(of: credentials)
        let sealed = keyring.seal(try credentials.encoded(with: WireCoding.makeEncoder()), for: .providerCredentials(appId: appId, provider: platform, appPackage: appPackage))
        let stored = try await visibility.send(
            StorageCommand(action: .setProviderCredentials(appId: appId, provider: platform, appPackage: appPackage, sealedCredentials: sealed))
        ) { [store] in
            try await store.providerSecret(appId: appId, provider: provider, appPackage: appPackage) == sealed ? true : nil
        } != nil
        return try JSONResponse.make(stored ? .ok : .accepted, StoredProvider(appId: appId, appPackage: appPackage, credentials: credentials))
    }

    /// Keys that can be parsed here are parsed, so a broken key is refused now rather than at the first push.
    private static func checkKeys(_ credentials: ProviderCredentials) throws(APIFailure) {
        switch credentials {
        case .apns(let apns) where (try? P256.Signing.PrivateKey(pemRepresentation: apns.privateKey)) == nil:
            throw APIFailure(ValidationError.invalid("privateKey", "privateKey must be the PEM text of the .p8 (P-256) key"))
        case .webpush(let webPush) where (try? P256.Signing.PrivateKey(pemRepresentation: webPush.vapidPrivateKey)) == nil:
            throw APIFailure(ValidationError.invalid("vapidPrivateKey", "vapidPrivateKey must be the PEM text of a P-256 key"))
        default:
            return
        }
    }

    /// Random bytes as base64url text.
    static func randomToken(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

extension StoredProvider {
    /// What is answered about stored credentials: their identifying fields, never a secret.
    init(appId: String, appPackage: String, credentials: ProviderCredentials) {
        self.init(appId: appId, provider: credentials.platform, appPackage: appPackage.isEmpty ? nil : appPackage)
        switch credentials {
        case .apns(let apns):
            (teamId, keyId, topic, environment, endpoint) = (apns.teamId, apns.keyId, apns.topic, apns.environment.rawValue, apns.endpoint)
        case .fcm(let fcm):
            (projectId, clientEmail, endpoint) = (fcm.serviceAccount.projectId, fcm.serviceAccount.clientEmail, fcm.endpoint)
        case .wns(let wns):
            (packageSid, endpoint) = (wns.packageSid, wns.tokenURL)
        case .webpush(let webPush):
            subject = webPush.subject
            vapidPublicKey = (try? P256.Signing.PrivateKey(pemRepresentation: webPush.vapidPrivateKey)).map {
                $0.publicKey.x963Representation.base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            }
        }
    }
}
