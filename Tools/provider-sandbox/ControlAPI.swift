import Crypto
import Foundation
import HTTPTypes
import Hummingbird

/// The plain-HTTP control API: health, credentials and device addresses (the sandbox playing each
/// provider's developer console and a device), recorded deliveries and rejections, and fault
/// injection (including dropped APNs connections and their idle time), feeds for the service to poll and receivers
/// of its webhooks (an app's back end's stand-in), identity providers' key sets (an app's sign-in provider's
/// stand-in), and captures of raw requests to the providers listener. JSON bodies, camelCase.
struct ControlAPI: Sendable {
    let keys: KeyRegistry
    let fcmAccounts: FCMServiceAccounts
    let webPushSubscriptions: WebPushSubscriptions
    let wns: WNSRegistry
    let recorder: DeliveryRecorder
    let faults: FaultInjector
    /// The APNs listener's connections: their idle time, and drops on demand.
    let apnsConnections: APNsConnectionRegistry
    /// Documents served for the service to poll.
    let feeds: FeedServer
    /// Receivers of webhook POSTs.
    let receivers: WebhookReceiver
    /// Identity providers' discovery documents and key sets.
    let identityProviders: IdentityProviderServer
    /// Raw requests to the providers listener, kept for the paths asked for.
    let captures: RequestCaptures
    /// Origin of the providers listener, for the URLs handed out.
    let providersOrigin: String

    /// For each provider the sandbox serves, the reason a fault status answers when a fault names none.
    private static let defaultReasons: [String: [Int: String]] = [
        "apns": [410: "Unregistered", 429: "TooManyRequests", 500: "InternalServerError", 503: "ServiceUnavailable"],
        FCMEndpoint.provider: FCMEndpoint.faultReasons,
        WebPushEndpoint.provider: WebPushEndpoint.faultReasons,
        WNSEndpoint.provider: WNSEndpoint.faultReasons,
    ]
    private static let maximumBodySize = 1 << 20

    func router() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("health") { _, _ in try Self.json(.ok, ["status": "ok"]) }
        router.post("apns/keys") { request, _ in try await createKey(request) }
        router.put("apns/keys/{keyId}") { request, context in
            try await registerKey(request, keyId: context.parameters.get("keyId") ?? "")
        }
        router.get("apns/keys") { _, _ in try listKeys() }
        router.post("fcm/service-accounts") { request, _ in try await createServiceAccount(request) }
        router.post("webpush/subscriptions") { request, _ in try await createSubscription(request) }
        router.get("webpush/subscriptions/{subscriptionId}") { _, context in
            try browserKeys(subscriptionId: context.parameters.get("subscriptionId") ?? "")
        }
        router.delete("webpush/subscriptions/{subscriptionId}") { _, context in
            guard try webPushSubscriptions.unsubscribe(id: context.parameters.get("subscriptionId") ?? "") else {
                throw ControlAPIError.notFound("subscription", field: "subscriptionId")
            }
            return Response(status: .noContent)
        }
        router.get("deliveries") { request, _ in
            try Self.page(named: "deliveries", recorder.deliveries(Self.recordQuery(request)))
        }
        router.delete("deliveries") { _, _ in
            recorder.clearDeliveries()
            return Response(status: .noContent)
        }
        router.get("rejections") { request, _ in
            try Self.page(named: "rejections", recorder.rejections(Self.recordQuery(request)))
        }
        router.delete("rejections") { _, _ in
            recorder.clearRejections()
            return Response(status: .noContent)
        }
        router.post("wns/apps") { _, _ in try Self.json(.created, try wns.createApp()) }
        router.post("wns/channels") { request, _ in try await createChannel(request) }
        router.delete("wns/channels/{channelId}") { _, context in
            guard try wns.expireChannel(id: context.parameters.get("channelId") ?? "") else {
                throw ControlAPIError.notFound("channel", field: "channelId")
            }
            return Response(status: .noContent)
        }
        router.post("faults") { request, _ in try await addFault(request) }
        router.get("faults") { _, _ in try Self.json(.ok, ["faults": faults.all]) }
        router.delete("faults") { _, _ in
            faults.removeAll()
            return Response(status: .noContent)
        }
        router.delete("faults/{faultId}") { _, context in
            guard faults.remove(id: context.parameters.get("faultId") ?? "") else {
                throw ControlAPIError.notFound("fault", field: "faultId")
            }
            return Response(status: .noContent)
        }
        router.post("captures") { request, _ in try await armCapture(request) }
        router.get("captures/{captureId}") { _, context in
            guard let capture = captures.capture(id: context.parameters.get("captureId") ?? "") else {
                throw ControlAPIError.notFound("capture", field: "captureId")
            }
            return try Self.json(.ok, capture)
        }
        router.delete("captures/{captureId}") { _, context in
            guard captures.remove(id: context.parameters.get("captureId") ?? "") else {
                throw ControlAPIError.notFound("capture", field: "captureId")
            }
            return Response(status: .noContent)
        }
        router.get("apns/connections") { _, _ in try apnsConnectionState() }
        router.put("apns/connections") { request, _ in try await setAPNsConnections(request) }
        router.post("apns/connections/drop") { request, _ in try await dropAPNsConnections(request) }
        feeds.register(on: router)
        receivers.register(on: router)
        identityProviders.register(on: router)
        return router
    }

    // MARK: APNs keys

    private struct KeyRequest: Decodable {
        let teamId: String?
        let topics: [String]?
        let publicKey: String?
    }

    private struct CreatedKey: Encodable {
        let keyId: String
        let teamId: String
        let topics: [String]
        let privateKey: String
    }

    private struct PublicKeyDescription: Encodable {
        let keyId: String
        let teamId: String
        let topics: [String]
        let publicKey: String
    }

    /// `POST /apns/keys`: creates a key and hands out its private half, once.
    private func createKey(_ request: Request) async throws -> Response {
        let body = try await Self.decode(KeyRequest.self, from: request)
        let (teamId, topics) = try Self.validateTeamAndTopics(body)
        let (key, privateKeyPEM) = try keys.createKey(teamId: teamId, topics: topics)
        let created = CreatedKey(keyId: key.keyId, teamId: key.teamId, topics: key.topics, privateKey: privateKeyPEM)
        return try Self.json(.created, created)
    }

    /// `PUT /apns/keys/{keyId}`: registers an existing key by its public half.
    private func registerKey(_ request: Request, keyId: String) async throws -> Response {
        guard KeyRegistry.isIdentifier(keyId) else {
            throw ControlAPIError.invalid("keyId must be 10 uppercase letters or digits.", field: "keyId")
        }
        let body = try await Self.decode(KeyRequest.self, from: request)
        let (teamId, topics) = try Self.validateTeamAndTopics(body)
        guard let pem = body.publicKey, let publicKey = try? P256.Signing.PublicKey(pemRepresentation: pem) else {
            throw ControlAPIError.invalid("publicKey must be a P-256 public key in PEM.", field: "publicKey")
        }
        try keys.register(APNsKey(keyId: keyId, teamId: teamId, topics: topics, publicKey: publicKey))
        return Response(status: .noContent)
    }

    private func listKeys() throws -> Response {
        let descriptions = try keys.all.map { key in
            PublicKeyDescription(
                keyId: key.keyId,
                teamId: key.teamId,
                topics: key.topics,
                publicKey: try key.publicKey().pemRepresentation
            )
        }
        return try Self.json(.ok, ["keys": descriptions])
    }

    private static func validateTeamAndTopics(_ body: KeyRequest) throws -> (teamId: String, topics: [String]) {
        guard let teamId = body.teamId, KeyRegistry.isIdentifier(teamId) else {
            throw ControlAPIError.invalid("teamId must be 10 uppercase letters or digits.", field: "teamId")
        }
        guard let topics = body.topics, !topics.isEmpty,
            topics.allSatisfy({ !$0.isEmpty && !$0.contains(where: \.isWhitespace) })
        else {
            throw ControlAPIError.invalid("topics must be a non-empty list of bundle ids.", field: "topics")
        }
        return (teamId, topics)
    }

    // MARK: FCM service accounts

    private struct ServiceAccountRequest: Decodable {
        let projectId: String?
    }

    /// `POST /fcm/service-accounts`: a new service account of the project, answered as the key file
    /// Google's console downloads (private key included, once).
    private func createServiceAccount(_ request: Request) async throws -> Response {
        let body = try await Self.decode(ServiceAccountRequest.self, from: request)
        guard let projectId = body.projectId, FCMServiceAccounts.isProjectId(projectId) else {
            throw ControlAPIError.invalid(
                "projectId must be 6 to 30 lowercase letters, digits or hyphens, starting with a letter.",
                field: "projectId"
            )
        }
        return try Self.json(.created, try fcmAccounts.create(projectId: projectId, tokenURI: providersOrigin + "/fcm/token"))
    }

    // MARK: Web Push subscriptions

    private struct SubscriptionRequest: Decodable {
        let applicationServerKey: String?
    }

    /// `POST /webpush/subscriptions`: subscribes as a browser does and answers the PushSubscription
    /// JSON; with `applicationServerKey`, only that VAPID key may push to it.
    private func createSubscription(_ request: Request) async throws -> Response {
        let applicationServerKey = try await Self.decode(SubscriptionRequest.self, from: request).applicationServerKey
        if let applicationServerKey {
            guard let raw = Base64URL.decode(applicationServerKey),
                (try? P256.Signing.PublicKey(x963Representation: raw)) != nil
            else {
                throw ControlAPIError.invalid(
                    "applicationServerKey must be an uncompressed P-256 public key, base64url.",
                    field: "applicationServerKey"
                )
            }
        }
        let subscription = try webPushSubscriptions.create(
            applicationServerKey: applicationServerKey,
            endpointBase: providersOrigin + "/webpush"
        )
        return try Self.json(.created, subscription)
    }

    private struct BrowserKeys: Encodable {
        let subscriptionId: String
        let privateKey: String
        let auth: String
        let applicationServerKey: String?
        let unsubscribed: Bool
    }

    /// `GET /webpush/subscriptions/{subscriptionId}`: the browser's half of the keys (the P-256 private key, raw,
    /// base64url, and the auth secret), for decrypting a recorded push with another implementation.
    private func browserKeys(subscriptionId: String) throws -> Response {
        guard let subscription = webPushSubscriptions.subscription(id: subscriptionId) else {
            throw ControlAPIError.notFound("subscription", field: "subscriptionId")
        }
        return try Self.json(
            .ok,
            BrowserKeys(
                subscriptionId: subscription.id,
                privateKey: subscription.privateKey,
                auth: subscription.auth,
                applicationServerKey: subscription.applicationServerKey,
                unsubscribed: subscription.unsubscribed
            )
        )
    }

    // MARK: WNS channels

    private struct ChannelRequest: Decodable {
        let clientId: String?
    }

    private struct CreatedChannel: Encodable {
        let channelUri: String
        let channelId: String
        let clientId: String?
    }

    /// `POST /wns/channels`: a new channel URI; with `clientId`, only that app may push to it.
    private func createChannel(_ request: Request) async throws -> Response {
        let clientId = try await Self.decode(ChannelRequest.self, from: request).clientId
        if let clientId, wns.app(clientId: clientId) == nil {
            throw ControlAPIError.invalid("clientId must be a registered app's client id.", field: "clientId")
        }
        let channel = try wns.createChannel(clientId: clientId)
        return try Self.json(
            .created,
            CreatedChannel(
                channelUri: providersOrigin + "/wns/channels/" + channel.channelId,
                channelId: channel.channelId,
                clientId: clientId
            )
        )
    }

    // MARK: Faults

    private struct FaultRequest: Decodable {
        let provider: String?
        let token: String?
        let status: Int?
        let reason: String?
        let retryAfter: Int?
        /// Send `retryAfter` as the HTTP-date that many seconds from now rather than as seconds.
        let retryAfterAsDate: Bool?
        let delayMilliseconds: Int?
        let dropConnection: Bool?
        let times: Int?
        let timestamp: Int64?
    }

    /// `POST /faults`: answers the fault, with its generated `faultId`.
    private func addFault(_ request: Request) async throws -> Response {
        let body = try await Self.decode(FaultRequest.self, from: request)
        let provider = body.provider ?? "apns"
        guard let defaultReasons = Self.defaultReasons[provider] else {
            let known = Self.defaultReasons.keys.sorted().joined(separator: ", ")
            throw ControlAPIError.invalid("provider must be one of: \(known).", field: "provider")
        }
        guard let token = body.token, !token.isEmpty else {
            throw ControlAPIError.invalid("token is required.", field: "token")
        }
        if let status = body.status, !(200...599).contains(status) {
            throw ControlAPIError.invalid("status must be an HTTP status between 200 and 599.", field: "status")
        }
        let reason = body.reason ?? body.status.flatMap { defaultReasons[$0] }
        if let status = body.status, status != 200, reason?.isEmpty ?? true {
            throw ControlAPIError.invalid("reason is required for status \(status).", field: "reason")
        }
        if let retryAfter = body.retryAfter, retryAfter < 0 {
            throw ControlAPIError.invalid("retryAfter must be a number of seconds, 0 or more.", field: "retryAfter")
        }
        let delay = body.delayMilliseconds ?? 0
        guard (0...600_000).contains(delay) else {
            throw ControlAPIError.invalid("delayMilliseconds must be between 0 and 600000.", field: "delayMilliseconds")
        }
        if let times = body.times, times < 1 {
            throw ControlAPIError.invalid("times must be 1 or more; omit it for every request.", field: "times")
        }
        let dropConnection = body.dropConnection ?? false
        guard body.status != nil || dropConnection || delay > 0 else {
            throw ControlAPIError.invalid("A fault needs a status, dropConnection or delayMilliseconds.", field: "status")
        }
        let fault = Fault(
            faultId: UUID().uuidString.lowercased(),
            provider: provider,
            token: token,
            status: body.status,
            reason: reason,
            retryAfter: body.retryAfter.map { seconds in
                guard body.retryAfterAsDate == true else { return String(seconds) }
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
                return formatter.string(from: Date().addingTimeInterval(TimeInterval(seconds)))
            },
            delayMilliseconds: delay,
            dropConnection: dropConnection,
            times: body.times,
            timestamp: body.timestamp
        )
        faults.add(fault)
        return try Self.json(.created, fault)
    }

    // MARK: Captures

    private struct CaptureRequest: Decodable {
        let path: String?
        let limit: Int?
    }

    /// `POST /captures` `{"path", "limit"}`: keeps the next `limit` (default 16, at most 100) requests to `path` on the
    /// providers listener as they arrived, every header and the body's bytes, until `DELETE /captures/{captureId}`;
    /// `GET /captures/{captureId}` answers them.
    private func armCapture(_ request: Request) async throws -> Response {
        let body = try await Self.decode(CaptureRequest.self, from: request)
        guard let path = body.path, path.hasPrefix("/"), !path.contains("?") else {
            throw ControlAPIError.invalid("path must be a path on the providers listener, such as /fcm/token.", field: "path")
        }
        let limit = body.limit ?? 16
        guard (1...RequestCaptures.maximumLimit).contains(limit) else {
            throw ControlAPIError.invalid("limit must be between 1 and \(RequestCaptures.maximumLimit).", field: "limit")
        }
        guard let capture = captures.arm(path: path, limit: limit) else {
            throw ControlAPIError.invalid("At most \(RequestCaptures.maximumCaptures) captures at once: delete one first.", field: nil)
        }
        return try Self.json(.created, capture)
    }

    // MARK: APNs connections

    private struct ConnectionSettings: Decodable {
        let idleTimeoutSeconds: Double?
    }

    private struct ConnectionState: Encodable {
        let open: Int
        let idleTimeoutSeconds: Double
    }

    private struct DropRequest: Decodable {
        let goAway: Bool?
    }

    private func apnsConnectionState() throws -> Response {
        let idleTimeout = Double(apnsConnections.idleTimeout.nanoseconds) / 1e9
        return try Self.json(.ok, ConnectionState(open: apnsConnections.openConnections, idleTimeoutSeconds: idleTimeout))
    }

    /// `PUT /apns/connections`: the idle time after which an APNs connection without requests gets GOAWAY.
    private func setAPNsConnections(_ request: Request) async throws -> Response {
        let body = try await Self.decode(ConnectionSettings.self, from: request)
        guard let seconds = body.idleTimeoutSeconds, (0.1...86_400).contains(seconds) else {
            throw ControlAPIError.invalid("idleTimeoutSeconds must be between 0.1 and 86400.", field: "idleTimeoutSeconds")
        }
        apnsConnections.setIdleTimeout(.nanoseconds(Int64(seconds * 1e9)))
        return try apnsConnectionState()
    }

    /// `POST /apns/connections/drop`: ends every open APNs connection now, with GOAWAY or with a reset.
    private func dropAPNsConnections(_ request: Request) async throws -> Response {
        let goAway = try await Self.decode(DropRequest.self, from: request).goAway ?? true
        let dropped = apnsConnections.dropAll(goAway ? .goAway : .reset)
        return try Self.json(.ok, ["dropped": dropped])
    }

    // MARK: Records

    /// Reads `provider`, `token`, `after` and `limit` from the query string.
    private static func recordQuery(_ request: Request) throws -> RecordQuery {
        let parameters = request.uri.queryParameters
        var query = RecordQuery()
        query.provider = parameters["provider"].map(String.init)
        query.deviceToken = parameters["token"].map(String.init)
        if let after = parameters["after"] {
            guard let value = Int(after), value >= 0 else {
                throw ControlAPIError.invalid("after must be a record id, 0 or more.", field: "after")
            }
            query.after = value
        }
        if let limit = parameters["limit"] {
            guard let value = Int(limit), value >= 1 else {
                throw ControlAPIError.invalid("limit must be 1 or more.", field: "limit")
            }
            query.limit = value
        }
        return query
    }

    /// `{"<name>": [records...], "lastId": n}`, the records' JSON embedded as rendered.
    private static func page(named name: String, _ page: RecordPage) -> Response {
        var body = ByteBuffer()
        body.reserveCapacity(page.records.reduce(64) { $0 + $1.json.count + 1 })
        body.writeString("{\"\(name)\":[")
        for (index, record) in page.records.enumerated() {
            if index > 0 {
                body.writeString(",")
            }
            body.writeBytes(record.json)
        }
        body.writeString("],\"lastId\":\(page.lastId)}")
        return Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: body)
        )
    }

    // MARK: JSON

    private static func decode<Body: Decodable>(_ type: Body.Type, from request: Request) async throws -> Body {
        var request = request
        let buffer = try await request.collectBody(upTo: maximumBodySize)
        do {
            // No body reads as `{}`: every field absent.
            let json = buffer.readableBytes == 0 ? Data("{}".utf8) : Data(buffer.readableBytesView)
            return try JSONDecoder().decode(Body.self, from: json)
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context) {
            let field = context.codingPath.first?.stringValue
            throw ControlAPIError.invalid("\(field ?? "body") has the wrong type.", field: field)
        } catch {
            throw ControlAPIError.invalid("The body must be a JSON object.", field: nil)
        }
    }

    fileprivate static func json(_ status: HTTPResponse.Status, _ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value)))
        )
    }
}

/// A control API error answer: `{"error": {"code", "message", "field"}}`.
struct ControlAPIError: HTTPResponseError {
    /// 404 for an id in the path that names nothing: "No <thing> with that id."
    static func notFound(_ thing: String, field: String) -> ControlAPIError {
        ControlAPIError(status: .notFound, code: "not_found", message: "No \(thing) with that id.", field: field)
    }

    private struct Body: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
            let field: String?
        }

        let error: Detail
    }

    let status: HTTPResponse.Status
    let code: String
    let message: String
    let field: String?

    static func invalid(_ message: String, field: String?) -> ControlAPIError {
        ControlAPIError(status: .badRequest, code: "invalid_request", message: message, field: field)
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        try ControlAPI.json(status, Body(error: Body.Detail(code: code, message: message, field: field)))
    }
}
