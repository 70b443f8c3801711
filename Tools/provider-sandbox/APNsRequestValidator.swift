import Foundation

/// An APNs error answer: the HTTP status and Apple's `reason`
/// ("Handling notification responses from APNs").
struct APNsError: Error, Sendable {
    let status: Int
    let reason: String

    static let badCollapseId = APNsError(status: 400, reason: "BadCollapseId")
    static let badDeviceToken = APNsError(status: 400, reason: "BadDeviceToken")
    static let badExpirationDate = APNsError(status: 400, reason: "BadExpirationDate")
    static let badMessageId = APNsError(status: 400, reason: "BadMessageId")
    static let badPriority = APNsError(status: 400, reason: "BadPriority")
    static let invalidPushType = APNsError(status: 400, reason: "InvalidPushType")
    static let missingDeviceToken = APNsError(status: 400, reason: "MissingDeviceToken")
    static let missingTopic = APNsError(status: 400, reason: "MissingTopic")
    static let payloadEmpty = APNsError(status: 400, reason: "PayloadEmpty")
    static let topicDisallowed = APNsError(status: 400, reason: "TopicDisallowed")
    /// Sandbox-specific: APNs documents no reason for a body that is not a JSON object with `aps`.
    static let badPayload = APNsError(status: 400, reason: "BadPayload")
    static let expiredProviderToken = APNsError(status: 403, reason: "ExpiredProviderToken")
    static let invalidProviderToken = APNsError(status: 403, reason: "InvalidProviderToken")
    static let missingProviderToken = APNsError(status: 403, reason: "MissingProviderToken")
    static let badPath = APNsError(status: 404, reason: "BadPath")
    static let methodNotAllowed = APNsError(status: 405, reason: "MethodNotAllowed")
    static let payloadTooLarge = APNsError(status: 413, reason: "PayloadTooLarge")
    static let tooManyProviderTokenUpdates = APNsError(status: 429, reason: "TooManyProviderTokenUpdates")
}

/// The values of `apns-push-type`, with the topic each requires and its payload limit.
enum APNsPushType: String, Sendable {
    case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk

    /// What Apple appends to the app's bundle id to form the topic of this push type.
    var topicSuffix: String {
        switch self {
        case .alert, .background, .mdm: ""
        case .location: ".location-query"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        }
    }

    var maximumPayloadSize: Int {
        self == .voip ? 5120 : 4096
    }

    /// The push type APNs assumes for a request without `apns-push-type` (required only on watchOS): background
    /// when `aps` has `content-available` and nothing a person sees or hears (alert, badge, sound), alert otherwise,
    /// a body that does not parse included (its payload check refuses it).
    init(assumedFor body: [UInt8]) {
        let payload = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        guard let aps = payload?["aps"] as? [String: Any], aps["content-available"] != nil,
            aps["alert"] == nil, aps["badge"] == nil, aps["sound"] == nil
        else {
            self = .alert
            return
        }
        self = .background
    }
}

/// The request headers and body checks APNs makes, in the order the sandbox applies them.
enum APNsRequestValidator {
    /// A device token is 32 bytes (64 hex digits), or 80 bytes (160 hex digits).
    static func validateDeviceToken(_ token: Substring) throws(APNsError) {
        guard !token.isEmpty else { throw .missingDeviceToken }
        var token = token
        let isValid = token.withUTF8 { digits in
            (digits.count == 64 || digits.count == 160) && digits.allSatisfy(\.isASCIIHexDigit)
        }
        guard isValid else { throw .badDeviceToken }
    }

    /// Validates the request's `apns-*` headers against the key that signed the provider token.
    /// `hasMalformedID`: the request's `apns-id` is not a canonical UUID (the caller checks it once,
    /// since it also picks the `apns-id` of the answer).
    static func validateHeaders(
        _ request: APNsRequest,
        key: APNsKey,
        hasMalformedID: Bool
    ) throws(APNsError) -> APNsPushType {
        guard !hasMalformedID else { throw .badMessageId }
        let pushType: APNsPushType
        if let name = request.pushType {
            guard let named = APNsPushType(rawValue: name) else { throw .invalidPushType }
            pushType = named
        } else {
            pushType = APNsPushType(assumedFor: request.body)
        }
        guard let topic = request.topic, !topic.isEmpty else { throw .missingTopic }
        guard key.topics.contains(where: { isTopic(topic, of: $0, suffix: pushType.topicSuffix) }) else {
            throw .topicDisallowed
        }
        if let priority = request.priority {
            let isKnown = priority == "1" || priority == "5" || priority == "10"
            guard isKnown, !(pushType == .background && priority == "10") else { throw .badPriority }
        }
        if let expiration = request.expiration {
            guard let seconds = Int64(expiration), seconds >= 0 else { throw .badExpirationDate }
        }
        if let collapseID = request.collapseID, collapseID.utf8.count > 64 {
            throw .badCollapseId
        }
        return pushType
    }

    /// Validates the body (a JSON object whose `aps` is an object) and returns it as compact JSON text.
    static func validatePayload(_ body: [UInt8], pushType: APNsPushType) throws(APNsError) -> [UInt8] {
        guard !body.isEmpty else { throw .payloadEmpty }
        guard body.count <= pushType.maximumPayloadSize else { throw .payloadTooLarge }
        guard let document = JSONDocument(body, inspecting: "aps"), document.kind == .object,
            document.memberKind == .object
        else { throw .badPayload }
        return document.hasWhitespace ? JSONText.compact(body) : body
    }

    /// Whether `topic` is the bundle id `app` followed by a push type's `suffix`, byte for byte.
    private static func isTopic(_ topic: String, of app: String, suffix: String) -> Bool {
        topic.utf8.starts(with: app.utf8) && topic.utf8.dropFirst(app.utf8.count).elementsEqual(suffix.utf8)
    }
}
