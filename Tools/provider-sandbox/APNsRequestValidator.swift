import Foundation
import HTTPTypes

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
}

/// The request headers and body checks APNs makes, in the order the sandbox applies them.
enum APNsRequestValidator {
    /// Headers kept in a delivery record: every `apns-*` header and `content-type`.
    static func recordedHeaders(_ headers: HTTPFields) -> [String: String] {
        headers.recorded { $0.hasPrefix("apns-") || $0 == "content-type" }
    }

    /// A device token is 32 bytes (64 hex digits), or 80 bytes (160 hex digits).
    static func validateDeviceToken(_ token: Substring) throws(APNsError) {
        guard !token.isEmpty else { throw .missingDeviceToken }
        guard token.count == 64 || token.count == 160, token.allSatisfy(\.isHexDigit) else {
            throw .badDeviceToken
        }
    }

    /// Validates the `apns-*` headers against the key that signed the provider token.
    static func validateHeaders(_ headers: HTTPFields, key: APNsKey) throws(APNsError) -> APNsPushType {
        if let apnsID = headers[.apnsID], !isCanonicalUUID(apnsID) {
            throw .badMessageId
        }
        guard let pushType = headers[.apnsPushType].flatMap(APNsPushType.init(rawValue:)) else {
            throw .invalidPushType
        }
        guard let topic = headers[.apnsTopic], !topic.isEmpty else { throw .missingTopic }
        guard key.topics.contains(where: { $0 + pushType.topicSuffix == topic }) else { throw .topicDisallowed }
        if let priority = headers[.apnsPriority] {
            guard ["1", "5", "10"].contains(priority), !(pushType == .background && priority == "10") else {
                throw .badPriority
            }
        }
        if let expiration = headers[.apnsExpiration] {
            guard let seconds = Int64(expiration), seconds >= 0 else { throw .badExpirationDate }
        }
        if let collapseID = headers[.apnsCollapseID], collapseID.utf8.count > 64 {
            throw .badCollapseId
        }
        return pushType
    }

    /// Validates the body and returns it as compact JSON text.
    static func validatePayload(_ body: [UInt8], pushType: APNsPushType) throws(APNsError) -> String {
        guard !body.isEmpty else { throw .payloadEmpty }
        guard body.count <= pushType.maximumPayloadSize else { throw .payloadTooLarge }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            object["aps"] is [String: Any]
        else { throw .badPayload }
        return JSONText.compact(body)
    }

    /// Whether `value` is a UUID in its canonical 8-4-4-4-12 hexadecimal form.
    static func isCanonicalUUID(_ value: String) -> Bool {
        let groups = value.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }
}

extension HTTPField.Name {
    static let apnsID = Self("apns-id")!
    static let apnsUniqueID = Self("apns-unique-id")!
    static let apnsPushType = Self("apns-push-type")!
    static let apnsTopic = Self("apns-topic")!
    static let apnsPriority = Self("apns-priority")!
    static let apnsExpiration = Self("apns-expiration")!
    static let apnsCollapseID = Self("apns-collapse-id")!
}
