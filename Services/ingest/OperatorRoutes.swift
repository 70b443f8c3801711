import Crypto
import Foundation
import Hummingbird
import NotifyModels

/// `POST /v1/apps` and `PUT /v1/apps/{appId}/providers/{provider}` (operator token).
struct OperatorRoutes: Sendable {
    let authenticator: Authenticator
    let sender: CommandSender
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

    private struct StoredProvider: Encodable {
        var appId: String
        var provider: String
        var teamId: String
        var keyId: String
        var topic: String
        var environment: APNsCredentials.Environment
        var endpoint: String?
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
        try await sender.send([StorageCommand(action: .createApp(app))])
        let stored = await visibility.first(String.self, "SELECT app_id FROM apps WHERE app_id = \(appId)") != nil
        return try JSONResponse.make(
            stored ? .created : .accepted,
            CreatedApp(appId: appId, name: name, apiKey: apiKey, clientSigningKey: app.clientSigningKey, brokerUser: app.brokerUser),
            headers: [.location: "/v1/apps/\(appId)"])
    }

    private func setProvider(_ request: Request, appId: String, provider: String) async throws -> Response {
        try authenticator.requireOperator(request)
        guard provider == "apns" else {
            throw APIFailure(.badRequest, code: "unsupported_provider", message: "only apns credentials can be stored so far", field: "provider")
        }
        guard try await authenticator.apps.app(appId) != nil else {
            throw APIFailure(.notFound, code: "app_not_found", message: "no app with id \(appId)", field: "appId")
        }
        let credentials = try await JSONResponse.decode(APNsCredentials.self, from: request)
        do {
            try credentials.validate()
        } catch {
            throw APIFailure(error)
        }
        guard (try? P256.Signing.PrivateKey(pemRepresentation: credentials.privateKey)) != nil else {
            throw APIFailure(ValidationError.invalid("privateKey", "privateKey must be the PEM text of the .p8 (P-256) key"))
        }
        try await sender.send([StorageCommand(action: .setAPNsCredentials(appId: appId, credentials: credentials))])
        let json = String(decoding: try WireCoding.makeEncoder().encode(credentials), as: UTF8.self)
        let stored = await visibility.first(
            Int.self, "SELECT 1 FROM app_credentials WHERE app_id = \(appId) AND provider = 'apns' AND credentials = \(json)::jsonb") != nil
        return try JSONResponse.make(
            stored ? .ok : .accepted,
            StoredProvider(
                appId: appId, provider: provider, teamId: credentials.teamId, keyId: credentials.keyId, topic: credentials.topic,
                environment: credentials.environment, endpoint: credentials.endpoint))
    }

    /// Random bytes as base64url text.
    static func randomToken(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
