import HummingbirdCore
import NIOCore
import NIOHPACK

/// An APNs request as the sandbox checks it: what it reads of the HEADERS frame, taken in one pass (several fields
/// of one name joined with ", "), and the body.
struct APNsRequest {
    /// Bodies are kept up to one byte past the largest payload APNs takes: enough to tell one is too large.
    static let maximumBodyKept = APNsPushType.voip.maximumPayloadSize + 1

    private(set) var method: String?
    /// `:path` without its query.
    private(set) var path = "/"
    private(set) var authorization: String?
    private(set) var apnsID: String?
    private(set) var pushType: String?
    private(set) var topic: String?
    private(set) var priority: String?
    private(set) var expiration: String?
    private(set) var collapseID: String?
    /// Every `apns-*` header and `content-type`, for the delivery record.
    private(set) var recordedHeaders = RecordedHeaders()
    /// The body, up to `maximumBodyKept` bytes.
    private(set) var body: [UInt8] = []

    init(headers: HPACKHeaders) {
        for (name, value, _) in headers {
            switch name {
            case ":method": method = Self.joining(method, value)
            case ":path": path = Self.path(of: value)
            case "authorization": authorization = Self.joining(authorization, value)
            case "apns-id": apnsID = Self.joining(apnsID, value)
            case "apns-push-type": pushType = Self.joining(pushType, value)
            case "apns-topic": topic = Self.joining(topic, value)
            case "apns-priority": priority = Self.joining(priority, value)
            case "apns-expiration": expiration = Self.joining(expiration, value)
            case "apns-collapse-id": collapseID = Self.joining(collapseID, value)
            default: break
            }
            if name.hasPrefix("apns-") || name == "content-type" {
                recordedHeaders.add(name: name, value: value)
            }
        }
    }

    /// Whether the body kept is as long as it gets.
    var isBodyFull: Bool { body.count >= Self.maximumBodyKept }

    /// Keeps the bytes of a DATA frame, as far as they fit.
    mutating func appendBody(_ bytes: ByteBufferView) {
        body.append(contentsOf: bytes.prefix(max(Self.maximumBodyKept - body.count, 0)))
    }

    private static func joining(_ earlier: String?, _ value: String) -> String {
        earlier.map { $0 + ", " + value } ?? value
    }

    /// The path of a `:path` value as Hummingbird's `URI` reads it: up to the query.
    private static func path(of value: String) -> String {
        guard value.utf8.first == UInt8(ascii: "/") else { return URI(value).path }
        guard let query = value.utf8.firstIndex(of: UInt8(ascii: "?")) else { return value }
        return String(value[..<query])
    }
}
