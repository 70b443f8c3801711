import Foundation
import NotifyJSON
import NotifyModels

/// A notification in Microsoft Graph's words (the beta `notification` resource of Graph notifications, retired with
/// Project Rome): the body of Graph's `POST /me/notifications` read onto notify's `NotificationRequest` for one user,
/// and the resource Graph answers it with. Fields and refusals are named as Graph names them.
///
/// - `appNotificationId`, `groupName`, `expirationDateTime`, `payload.rawContent`, `payload.visualContent.title` and
///   `.body`: notify's fields of the same names and meaning.
/// - `priority`: `High`, `Low` or `None` (in any case) is notify's `high`, `low` or `none`; echoed in Graph's case.
/// - `displayTimeToLive`: seconds, a number or a string of digits (Graph's own example sends `"60"`); echoed as a number.
/// - `targetPolicy.platformTypes`: Graph's platforms onto notify's providers (`platformProviders`, in any case);
///   echoed as given.
/// - `targetHostName`: kept and echoed, not checked: in Graph it named the app, which here the path (`appId`) and
///   its API key name.
/// - `fallbackPolicy` (Graph's raw-to-visual fallback on iOS): refused, as notify has none; a notification with both
///   `rawContent` and `visualContent` is an alert carrying the raw content on every platform.
/// - Any other member is refused naming it, as Graph refuses a property its resource does not have; OData's
///   annotations (`@odata.type`) are skipped.
struct GraphNotification: Sendable {
    /// The notification as notify's publish takes it.
    var request: NotificationRequest
    /// `targetHostName` as given.
    var targetHostName: String?
    /// `targetPolicy.platformTypes` as given.
    var platformTypes: [String]?

    /// Graph's platform types, lowercased, and the provider that reaches each.
    static let platformProviders: KeyValuePairs<String, Platform> = ["windows": .wns, "ios": .apns, "android": .fcm, "webpush": .webpush]
    /// The resource's OData type, as Graph annotates it.
    static let odataType = "#microsoft.graph.notification"
    /// The longest `targetHostName` (a DNS name's limit).
    static let maximumHostNameLength = 253

    /// Reads Graph's body: one notification object, for `userId`.
    static func read(_ body: some ContiguousBytes, for userId: String) throws(APIFailure) -> GraphNotification {
        let document: JSONValue
        do {
            document = try JSONReader.read(body) { try $0.readValue() }
        } catch {
            throw APIFailure(.badRequest, code: "invalid_json", message: "the body is not valid JSON")
        }
        guard case .object(let members) = document else {
            throw APIFailure(.badRequest, code: "invalid_json", message: "the body is one notification object (Graph takes no arrays)")
        }
        do throws(ValidationError) {
            return try read(GraphObject(members: members, path: ""), for: userId)
        } catch {
            throw APIFailure(error)
        }
    }

    private static func read(_ body: GraphObject, for userId: String) throws(ValidationError) -> GraphNotification {
        if body.members["fallbackPolicy"].map({ $0 != .null }) == true {
            throw .invalid(
                "fallbackPolicy",
                "fallbackPolicy is not supported: send visualContent with the rawContent, and every platform gets an alert carrying the raw content")
        }
        try body.refuseMembers(other: ["targetHostName", "appNotificationId", "groupName", "expirationDateTime", "priority", "displayTimeToLive",
                                       "targetPolicy", "payload", "fallbackPolicy"])
        let targetHostName = try body.string("targetHostName")
        if let targetHostName, targetHostName.isEmpty || targetHostName.utf8.count > maximumHostNameLength {
            throw .invalid("targetHostName", "targetHostName must be 1 to \(maximumHostNameLength) bytes")
        }
        var request = NotificationRequest(
            userId: userId, appNotificationId: try body.string("appNotificationId"), groupName: try body.string("groupName"),
            priority: try priority(body), expirationDateTime: try body.timestamp("expirationDateTime"),
            displayTimeToLive: try displayTimeToLive(body))
        var platformTypes: [String]?
        if let policy = try body.object("targetPolicy") {
            try policy.refuseMembers(other: ["platformTypes"])
            platformTypes = try policy.strings("platformTypes")
            if let platformTypes { request.targetPolicy = TargetPolicy(platformTypes: try providers(of: platformTypes)) }
        }
        if let payload = try body.object("payload") {
            try payload.refuseMembers(other: ["rawContent", "visualContent"])
            var content = NotificationPayload(rawContent: try payload.string("rawContent"))
            if let visual = try payload.object("visualContent") {
                try visual.refuseMembers(other: ["title", "body"])
                content.visualContent = VisualContent(title: try visual.string("title"), body: try visual.string("body"))
            }
            request.payload = content
        }
        return GraphNotification(request: request, targetHostName: targetHostName, platformTypes: platformTypes)
    }

    /// The providers of Graph's platform types, in their order.
    private static func providers(of platformTypes: [String]) throws(ValidationError) -> [Platform] {
        var providers: [Platform] = []
        for (index, name) in platformTypes.enumerated() {
            guard let provider = platformProviders.first(where: { $0.key == name.lowercased() })?.value else {
                throw .invalid(
                    "targetPolicy.platformTypes[\(index)]",
                    "targetPolicy.platformTypes[\(index)] must be one of \(platformProviders.map(\.key).joined(separator: ", ")) (in any case)")
            }
            providers.append(provider)
        }
        return providers
    }

    /// A priority as Graph spells it.
    static func graphName(of priority: NotificationPriority) -> String {
        switch priority {
        case .high: "High"
        case .low: "Low"
        case .none: "None"
        }
    }

    private static func priority(_ body: GraphObject) throws(ValidationError) -> NotificationPriority? {
        guard let name = try body.string("priority") else { return nil }
        guard let priority = NotificationPriority.allCases.first(where: { graphName(of: $0).lowercased() == name.lowercased() }) else {
            throw .invalid("priority", "priority must be one of \(NotificationPriority.allCases.map(graphName).joined(separator: ", "))")
        }
        return priority
    }

    /// Seconds as a JSON number or a string of digits, as Graph takes an Int32.
    private static func displayTimeToLive(_ body: GraphObject) throws(ValidationError) -> Int? {
        let seconds: Double
        switch body.members["displayTimeToLive"] {
        case nil, .null?: return nil
        case .number(let number)?: seconds = number
        case .string(let text)? where !text.isEmpty && text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }):
            seconds = Double(text) ?? .infinity
        default: throw .invalid("displayTimeToLive", "displayTimeToLive must be a whole number of seconds (a number, or a string of digits)")
        }
        guard seconds.rounded() == seconds, seconds <= Double(Int32.max), seconds >= Double(Int32.min) else {
            throw .invalid("displayTimeToLive", "displayTimeToLive must be a whole number of seconds that fits an Int32")
        }
        return Int(seconds)
    }

    /// Graph's answer: the resource with the id notify gave it and the fields as `stored` (with notify's default
    /// expiration and priority where the body gave none); `targetHostName` and `platformTypes` as given.
    func resourceJSON(id: UUID, stored: NotificationContent) -> [UInt8] {
        var json = JSONWriter(capacity: 512)
        json.beginObject()
        json.key("@odata.type")
        json.string(Self.odataType)
        json.key("id")
        json.uuid(id)
        if let targetHostName {
            json.key("targetHostName")
            json.string(targetHostName)
        }
        if let appNotificationId = stored.appNotificationId {
            json.key("appNotificationId")
            json.string(appNotificationId)
        }
        if let groupName = stored.groupName {
            json.key("groupName")
            json.string(groupName)
        }
        if let platformTypes {
            json.key("targetPolicy")
            json.beginObject()
            json.key("platformTypes")
            json.strings(platformTypes)
            json.endObject()
        }
        json.key("payload")
        json.beginObject()
        if let raw = stored.payload.rawContent {
            json.key("rawContent")
            json.string(raw)
        }
        if let visual = stored.payload.visualContent {
            json.key("visualContent")
            json.beginObject()
            for (key, text) in [("title", visual.title), ("body", visual.body)] {
                guard let text else { continue }
                json.key(key)
                json.string(text)
            }
            json.endObject()
        }
        json.endObject()
        if let seconds = stored.displayTimeToLive {
            json.key("displayTimeToLive")
            json.integer(Int64(seconds))
        }
        json.key("expirationDateTime")
        json.timestamp(stored.expirationDateTime)
        json.key("priority")
        json.string(Self.graphName(of: stored.priority))
        json.endObject()
        return json.bytes
    }
}

/// An object of a Graph body, read member by member; `path` is where it sits (`payload.`), so that a refusal names
/// the field as the body spells it.
private struct GraphObject {
    var members: [String: JSONValue]
    var path: String

    /// Refuses a member not in `known`, naming the first in order (OData annotations such as `@odata.type` pass).
    func refuseMembers(other known: Set<String>) throws(ValidationError) {
        guard let unknown = members.keys.filter({ !known.contains($0) && !$0.hasPrefix("@") }).sorted().first else { return }
        throw .invalid(path + unknown, "\(path + unknown) is not a field of Graph's notification")
    }

    func string(_ key: String) throws(ValidationError) -> String? {
        switch members[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        default: throw .invalid(path + key, "\(path + key) must be a string")
        }
    }

    func strings(_ key: String) throws(ValidationError) -> [String]? {
        switch members[key] {
        case nil, .null?: return nil
        case .array(let elements)?:
            var strings: [String] = []
            for (index, element) in elements.enumerated() {
                guard case .string(let text) = element else { throw .invalid("\(path + key)[\(index)]", "\(path + key)[\(index)] must be a string") }
                strings.append(text)
            }
            return strings
        default: throw .invalid(path + key, "\(path + key) must be an array of strings")
        }
    }

    func timestamp(_ key: String) throws(ValidationError) -> Date? {
        guard let text = try string(key) else { return nil }
        guard let date = WireCoding.parseTimestamp(text) else {
            throw .invalid(path + key, "\(path + key) must be an ISO 8601 time such as 2026-01-31T12:00:00Z")
        }
        return date
    }

    func object(_ key: String) throws(ValidationError) -> GraphObject? {
        switch members[key] {
        case nil, .null?: return nil
        case .object(let members)?: return GraphObject(members: members, path: path + key + ".")
        default: throw .invalid(path + key, "\(path + key) must be an object")
        }
    }
}
