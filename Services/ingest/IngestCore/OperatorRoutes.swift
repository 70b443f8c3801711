import Crypto
import Foundation
import Hummingbird
import NotifyModels

/// `POST /v1/apps` and `PUT /v1/apps/{appId}/providers/{provider}` (operator token).
struct OperatorRoutes: Sendable {
    let authenticator: Authenticator
    let visibility: WriteVisibility

    private struct CreateAppRequest: Decodable {
        var name: String?
        var brokerUser: String?
    }

    private struct CreatedApp: Encodable {
        var appId: String
        var name: String
        var apiKey: String
        var clientSigningKey: String
        var brokerUser: String?
    }

    /// What is answered about stored credentials: never a secret.
    private struct StoredProvider: Encodable {
        var appId: String
        var provider: Platform
        var teamId: String?
        var keyId: String?
        var topic: String?
        var environment: APNsCredentials.Environment?
        var endpoint: String?
        var projectId: String?
        var clientEmail: String?
        var packageSid: String?
        var subject: String?
        /// The VAPID public key (base64url, uncompressed point): the browser's `applicationServerKey`.
        var vapidPublicKey: String?

        init(appId: String, credentials: ProviderCredentials) {
            self.appId = appId
            provider = credentials.platform
            switch credentials {
            case .apns(let apns):
                (teamId, keyId, topic, environment, endpoint) = (apns.teamId, apns.keyId, apns.topic, apns.environment, apns.endpoint)
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

    func register(on router: Router<BasicRequestContext>) {
        router.post("/v1/apps") { request, _ in try await createApp(request) }
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
        let appId = "app_" + Self.randomToken(bytes: 9)
        let apiKey = "nk_" + Self.randomToken(bytes: 32)
        let app = AppRecord(
            appId: appId, name: name, apiKeyHash: AppDirectory.hashAPIKey(apiKey), clientSigningKey: Self.randomToken(bytes: 32),
            brokerUser: body.brokerUser, createdAt: Date())
        let stored = try await visibility.send(
            StorageCommand(action: .createApp(app)), thenRead: String.self, "SELECT app_id FROM apps WHERE app_id = \(appId)") != nil
        return try JSONResponse.make(
            stored ? .created : .accepted,
            CreatedApp(appId: appId, name: name, apiKey: apiKey, clientSigningKey: app.clientSigningKey, brokerUser: app.brokerUser),
            headers: [.location: "/v1/apps/\(appId)"])
    }

    private func setProvider(_ request: Request, appId: String, provider: String) async throws -> Response {
        try authenticator.requireOperator(request)
        guard let platform = Platform(rawValue: provider), Platform.providers.contains(platform) else {
            throw APIFailure(
                .badRequest, code: "unsupported_provider",
                message: "provider must be apns, fcm, wns or webpush (VoIP pushes use the apns credentials)", field: "provider")
        }
        guard try await authenticator.apps.app(appId) != nil else {
            throw APIFailure(.notFound, code: "app_not_found", message: "no app with id \(appId)", field: "appId")
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: JSONResponse.maximumBodyBytes)
        } catch {
            throw APIFailure(.contentTooLarge, code: "body_too_large", message: "the body may be at most \(JSONResponse.maximumBodyBytes) bytes")
        }
        let credentials: ProviderCredentials
        do {
            credentials = try ProviderCredentials.decode(platform, from: Data(body.readableBytesView), decoder: WireCoding.makeDecoder())
            try credentials.validate()
        } catch let error as DecodingError {
            throw APIFailure(DecodingFailure.validationError(error))
        } catch let error as ValidationError {
            throw APIFailure(error)
        }
        try Self.checkKeys(credentials)
        let json = String(decoding: try credentials.encoded(with: WireCoding.makeEncoder()), as: UTF8.self)
        let stored = try await visibility.send(
            StorageCommand(action: .setProviderCredentials(appId: appId, credentials: credentials)), thenRead: Int.self,
            "SELECT 1 FROM app_credentials WHERE app_id = \(appId) AND provider = \(provider) AND credentials = \(json)::jsonb") != nil
        return try JSONResponse.make(stored ? .ok : .accepted, StoredProvider(appId: appId, credentials: credentials))
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
