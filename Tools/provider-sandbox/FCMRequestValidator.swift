import Foundation
import HTTPTypes
import Hummingbird

/// An FCM HTTP v1 error answer in Google's shape: `{"error": {"code", "message", "status",
/// "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode"}]}}`.
/// Errors from Google's front end (authentication, permissions) carry no FCM `errorCode`.
struct FCMError: Error, Sendable {
    let status: Int
    let message: String
    let errorCode: String?

    static let unauthenticated = FCMError(
        status: 401,
        message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie "
            + "or other valid authentication credential. "
            + "See https://developers.google.com/identity/sign-in/web/devconsole-project.",
        errorCode: nil
    )

    static func permissionDenied(project: String) -> FCMError {
        FCMError(
            status: 403,
            message: "Permission 'cloudmessaging.messages.create' denied on resource "
                + "'//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).",
            errorCode: nil
        )
    }

    static func invalidArgument(_ message: String) -> FCMError {
        FCMError(status: 400, message: message, errorCode: "INVALID_ARGUMENT")
    }

    /// An injected fault: its reason is the FCM `errorCode`, the message Google's for the status.
    init(fault: Fault) {
        let status = fault.status ?? 500
        self.init(status: status, message: Self.defaultMessages[status] ?? "Error.", errorCode: fault.reason)
    }

    init(status: Int, message: String, errorCode: String?) {
        self.status = status
        self.message = message
        self.errorCode = errorCode
    }

    private static let defaultMessages = [
        400: "Request contains an invalid argument.",
        401: "Auth error from APNS or Web Push Service",
        403: "SenderId mismatch",
        404: "Requested entity was not found.",
        429: "Quota exceeded for quota metric 'Send requests' and limit 'Send requests per minute'.",
        500: "Internal error encountered.",
        503: "The service is currently unavailable.",
    ]

    /// Google's canonical status name for an HTTP status (google.rpc.Code).
    var googleStatus: String {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        case 409: "ABORTED"
        case 429: "RESOURCE_EXHAUSTED"
        case 500: "INTERNAL"
        case 501: "UNIMPLEMENTED"
        case 503: "UNAVAILABLE"
        case 504: "DEADLINE_EXCEEDED"
        default: "UNKNOWN"
        }
    }

    func response(retryAfter: String? = nil) -> Response {
        var body = "{\"error\":{\"code\":\(status),\"message\":\(JSONText.quoted(message))"
            + ",\"status\":\(JSONText.quoted(googleStatus))"
        if let errorCode {
            body += ",\"details\":[{\"@type\":\"type.googleapis.com/google.firebase.fcm.v1.FcmError\""
                + ",\"errorCode\":\(JSONText.quoted(errorCode))}]"
        }
        body += "}}"
        var headers: HTTPFields = [.contentType: "application/json; charset=UTF-8"]
        if let retryAfter {
            headers[.retryAfter] = retryAfter
        }
        return Response(
            status: HTTPResponse.Status(code: status),
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: body))
        )
    }
}

/// A send request that passed validation.
struct FCMSendRequest {
    let token: String
    /// The `message` object as compact JSON, keys sorted.
    let message: String
    /// `validate_only`: check the message but do not deliver it.
    let validateOnly: Bool
}

/// The checks FCM makes of a `messages:send` body, for the fields the sandbox knows; other fields
/// inside `message` pass through unchecked.
enum FCMRequestValidator {
    /// Largest data plus notification payload, in bytes.
    static let maximumPayloadSize = 4096
    /// Longest `android.ttl`: 28 days.
    private static let maximumTTLSeconds = 2_419_200
    private static let reservedDataKeys: Set = ["from", "notification", "message_type"]

    static func validate(_ body: [UInt8]) throws(FCMError) -> FCMSendRequest {
        guard let request = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw .invalidArgument("Invalid JSON payload received. Expected a JSON object.")
        }
        if let unknown = request.keys.sorted().first(where: { !["message", "validate_only", "validateOnly"].contains($0) }) {
            throw .invalidArgument("Invalid JSON payload received. Unknown name \"\(unknown)\": Cannot find field.")
        }
        guard let message = request["message"] as? [String: Any] else {
            throw .invalidArgument("Invalid JSON payload received. message must be an object.")
        }
        if let unknown = message.keys.sorted().first(where: { !messageFields.contains($0) && !messageFields.contains(snakeCase($0)) }) {
            throw .invalidArgument("Invalid JSON payload received. Unknown name \"\(unknown)\" at 'message': Cannot find field.")
        }
        let token = try validateTarget(message)
        try validateData(message["data"])
        try validateApns(message["apns"])
        try validateWebpush(message["webpush"])
        try validateFields(message["notification"], at: "message.notification", Self.notificationFields)
        try validateAndroid(message["android"])
        var payloadSize = 0
        for part in [message["data"], message["notification"]].compactMap({ $0 }) {
            payloadSize += try compactJSON(part).utf8.count
        }
        guard payloadSize <= maximumPayloadSize else { throw .invalidArgument("Android message is too big") }
        let validateOnly = (request["validate_only"] ?? request["validateOnly"]) as? Bool ?? false
        return FCMSendRequest(token: token, message: try compactJSON(message), validateOnly: validateOnly)
    }

    /// The registration token; topic and condition targets are not served by the sandbox.
    private static func validateTarget(_ message: [String: Any]) throws(FCMError) -> String {
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard !targets.isEmpty else { throw .invalidArgument("Recipient of the message is not set.") }
        guard targets.count == 1 else {
            throw .invalidArgument(
                "Invalid value at 'message' (oneof), oneof field 'target' is already set. Cannot set '\(targets[1])'"
            )
        }
        guard targets[0] == "token" else {
            throw .invalidArgument("Sandbox: only message.token targets are served, not \(targets[0]).")
        }
        guard let token = message["token"] as? String, !token.isEmpty, token.utf8.count <= 4096,
            token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ":_-".contains($0)) })
        else { throw .invalidArgument("The registration token is not a valid FCM registration token") }
        return token
    }

    /// `message`'s fields (google.firebase.fcm.v1.Message).
    private static let messageFields: Set = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "token", "topic", "condition",
    ]

    /// `data` is a map of strings, without FCM's reserved keys.
    private static func validateData(_ data: Any?) throws(FCMError) {
        guard let data else { return }
        guard let map = data as? [String: Any] else {
            throw .invalidArgument("Invalid value at 'message.data' (type.googleapis.com/google.protobuf.Struct)")
        }
        for (index, (key, value)) in map.sorted(by: { $0.key < $1.key }).enumerated() {
            guard value is String else {
                throw .invalidArgument("Invalid value at 'message.data[\(index)].value' (TYPE_STRING), \(value)")
            }
            if reservedDataKeys.contains(key) || key.hasPrefix("google") || key.hasPrefix("gcm") {
                throw .invalidArgument("Invalid data payload key: \(key)")
            }
        }
    }

    private static func validateAndroid(_ android: Any?) throws(FCMError) {
        guard let android else { return }
        guard let config = android as? [String: Any] else {
            throw .invalidArgument("Invalid value at 'message.android' (type.googleapis.com/google.firebase.fcm.v1.AndroidConfig)")
        }
        if let collapseKey = config["collapse_key"] ?? config["collapseKey"], !(collapseKey is String) {
            throw .invalidArgument("Invalid value at 'message.android.collapse_key' (TYPE_STRING), \(collapseKey)")
        }
        if let priority = config["priority"] {
            guard let value = priority as? String, ["NORMAL", "HIGH"].contains(value.uppercased()) else {
                throw .invalidArgument(
                    "Invalid value at 'message.android.priority' "
                        + "(type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), \(priority)"
                )
            }
        }
        if let ttl = config["ttl"] {
            guard let value = ttl as? String, let seconds = durationSeconds(value) else {
                throw .invalidArgument(
                    "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), \(ttl)"
                )
            }
            guard seconds <= Double(maximumTTLSeconds) else {
                throw .invalidArgument("message.android.ttl must be at most \(maximumTTLSeconds)s (28 days).")
            }
        }
        try validateFields(config["notification"], at: "message.android.notification", Self.androidNotificationFields)
        try validateData(config["data"])
    }

    /// `apns` (google.firebase.fcm.v1.ApnsConfig): `headers`, a map of strings, whose `apns-priority` and
    /// `apns-push-type` APNs takes only with its values; `payload`, an object with an `aps` object that APNs accepts at
    /// most 4096 bytes of.
    private static func validateApns(_ apns: Any?) throws(FCMError) {
        guard let apns else { return }
        guard let config = apns as? [String: Any] else {
            throw .invalidArgument("Invalid value at 'message.apns' (type.googleapis.com/google.firebase.fcm.v1.ApnsConfig)")
        }
        try validateFields(config, at: "message.apns", ["headers": .object, "payload": .object, "fcm_options": .object])
        let headers = try stringMap(config["headers"], at: "message.apns.headers")
        if let priority = headers["apns-priority"], !["1", "5", "10"].contains(priority) {
            throw .invalidArgument("Invalid value at 'message.apns.headers[apns-priority]': APNs takes 10, 5 or 1, not \(priority)")
        }
        if let type = headers["apns-push-type"],
            !["alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk"].contains(type)
        {
            throw .invalidArgument("Invalid value at 'message.apns.headers[apns-push-type]': \(type)")
        }
        if let payload = config["payload"] as? [String: Any] {
            if let aps = payload["aps"], !(aps is [String: Any]) {
                throw .invalidArgument("Invalid value at 'message.apns.payload.aps': must be an object.")
            }
            guard try compactJSON(payload).utf8.count <= maximumPayloadSize else { throw .invalidArgument("APNs payload is too big") }
        }
    }

    /// `webpush` (google.firebase.fcm.v1.WebpushConfig): `headers` and `data`, maps of strings (RFC 8030's `Urgency`
    /// one of its four values, `TTL` a number of seconds); `notification`, an object; `fcm_options.link`, an https URL.
    private static func validateWebpush(_ webpush: Any?) throws(FCMError) {
        guard let webpush else { return }
        guard let config = webpush as? [String: Any] else {
            throw .invalidArgument("Invalid value at 'message.webpush' (type.googleapis.com/google.firebase.fcm.v1.WebpushConfig)")
        }
        try validateFields(config, at: "message.webpush", ["headers": .object, "data": .object, "notification": .object, "fcm_options": .object])
        let headers = try stringMap(config["headers"], at: "message.webpush.headers")
        if let urgency = headers.first(where: { $0.key.lowercased() == "urgency" })?.value,
            !["very-low", "low", "normal", "high"].contains(urgency)
        {
            throw .invalidArgument("Invalid value at 'message.webpush.headers[Urgency]': \(urgency)")
        }
        if let ttl = headers.first(where: { $0.key.lowercased() == "ttl" })?.value, !(!ttl.isEmpty && ttl.allSatisfy { $0.isASCII && $0.isNumber }) {
            throw .invalidArgument("Invalid value at 'message.webpush.headers[TTL]': \(ttl)")
        }
        _ = try stringMap(config["data"], at: "message.webpush.data")
        try validateFields(config["fcm_options"], at: "message.webpush.fcm_options", ["link": .string, "analytics_label": .string])
        if let link = (config["fcm_options"] as? [String: Any])?["link"] as? String {
            guard let url = URL(string: link), url.scheme == "https", url.host != nil else {
                throw .invalidArgument("Invalid value at 'message.webpush.fcm_options.link': link must be an HTTPS URL")
            }
        }
    }

    /// A map of strings (a protobuf `map<string, string>`): FCM refuses any other value.
    private static func stringMap(_ value: Any?, at path: String) throws(FCMError) -> [String: String] {
        guard let value else { return [:] }
        guard let map = value as? [String: Any] else { throw .invalidArgument("Invalid value at '\(path)': must be an object.") }
        var strings: [String: String] = [:]
        for (key, entry) in map {
            guard let text = entry as? String else { throw .invalidArgument("Invalid value at '\(path)[\(key)]' (TYPE_STRING), \(entry)") }
            strings[key] = text
        }
        return strings
    }

    /// The type of a field of FCM's v1 message, as its JSON form must be.
    enum FieldType {
        case string, strings, bool, integer, object
        case oneOf([String])
    }

    /// `message.notification` (google.firebase.fcm.v1.Notification).
    static let notificationFields: [String: FieldType] = ["title": .string, "body": .string, "image": .string]

    /// `message.android.notification` (google.firebase.fcm.v1.AndroidNotification).
    static let androidNotificationFields: [String: FieldType] = [
        "title": .string, "body": .string, "icon": .string, "color": .string, "sound": .string, "tag": .string, "click_action": .string,
        "body_loc_key": .string, "body_loc_args": .strings, "title_loc_key": .string, "title_loc_args": .strings, "channel_id": .string,
        "ticker": .string, "sticky": .bool, "event_time": .string, "local_only": .bool, "default_sound": .bool,
        "default_vibrate_timings": .bool, "default_light_settings": .bool, "vibrate_timings": .strings, "notification_count": .integer,
        "light_settings": .object, "image": .string, "bypass_proxy_notification": .bool,
        "notification_priority": .oneOf(["PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX"]),
        "visibility": .oneOf(["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]),
    ]

    /// An object whose every field FCM knows (by its proto name or its lowerCamelCase JSON name) with a value of its type:
    /// FCM refuses an unknown name and a value of another type with INVALID_ARGUMENT, as here.
    private static func validateFields(_ value: Any?, at path: String, _ fields: [String: FieldType]) throws(FCMError) {
        guard let value else { return }
        guard let object = value as? [String: Any] else {
            throw .invalidArgument("Invalid value at '\(path)': must be an object.")
        }
        for (name, field) in object.sorted(by: { $0.key < $1.key }) {
            guard let type = fields[name] ?? fields[snakeCase(name)] else {
                throw .invalidArgument("Invalid JSON payload received. Unknown name \"\(name)\" at '\(path)': Cannot find field.")
            }
            let valid = switch type {
            case .string: field is String
            case .strings: (field as? [Any])?.allSatisfy { $0 is String } ?? false
            // JSONSerialization reads true and 1 alike (NSNumber): a bool and an integer are told apart no further.
            case .bool: field is Bool
            case .integer: (field as? NSNumber).map { $0.doubleValue.rounded() == $0.doubleValue } ?? false
            case .object: field is [String: Any]
            case .oneOf(let values): (field as? String).map(values.contains) ?? false
            }
            guard valid else { throw .invalidArgument("Invalid value at '\(path).\(name)', \(field)") }
        }
    }

    private static func snakeCase(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// Seconds of a protobuf JSON duration: digits, up to nine decimals, then "s" ("3.5s").
    private static func durationSeconds(_ value: String) -> Double? {
        guard value.hasSuffix("s") else { return nil }
        let number = value.dropLast()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber),
            parts.count == 1 || (1...9).contains(parts[1].count) && parts[1].allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return Double(number)
    }

    private static func compactJSON(_ value: Any) throws(FCMError) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            throw .invalidArgument("Invalid JSON payload received.")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
