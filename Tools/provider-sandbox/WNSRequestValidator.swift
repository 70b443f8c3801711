import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import HTTPTypes
import Hummingbird

/// A WNS error answer: the status, `X-WNS-Error-Description`, and for 406 `X-WNS-Status: channelthrottled`;
/// no body.
struct WNSError: Error, Sendable {
    let status: Int
    let description: String

    static let invalidToken = WNSError(status: 401, description: "Invalid token")
    static let expiredToken = WNSError(status: 401, description: "Token expired")
    static let notAuthorized = WNSError(
        status: 403,
        description: "The cloud service is not authorized to send a notification to this URI even though they are authenticated."
    )
    static let channelNotFound = WNSError(status: 404, description: "The channel URI is not valid or is not recognized by WNS.")
    static let channelExpired = WNSError(status: 410, description: "The channel expired.")
    static let payloadTooLarge = WNSError(status: 413, description: "The notification payload exceeds the 5000 byte size limit.")

    static func badRequest(_ description: String) -> WNSError {
        WNSError(status: 400, description: description)
    }

    func response(retryAfter: String? = nil) -> Response {
        var headers: HTTPFields = [.wnsErrorDescription: description, .wnsMessageID: WNSRequestValidator.messageID()]
        switch status {
        case 401:
            let reason = description == Self.expiredToken.description ? "Token has expired" : "Invalid token"
            headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\",error_description=\"\(reason)\""
        case 406: headers[.wnsStatus] = "channelthrottled"
        default: break
        }
        if let retryAfter {
            headers[.retryAfter] = retryAfter
        }
        return Response(status: HTTPResponse.Status(code: status), headers: headers)
    }
}

/// The notification types and their checks.
enum WNSNotificationType: String, Sendable {
    case toast = "wns/toast", tile = "wns/tile", badge = "wns/badge", raw = "wns/raw"

    var contentType: String {
        self == .raw ? "application/octet-stream" : "text/xml"
    }
}

/// The header and body checks WNS makes of a notification request.
enum WNSRequestValidator {
    static let maximumPayloadSize = 5000
    /// Longest `X-WNS-Tag` and `X-WNS-Group` (those of a Windows 10 toast).
    private static let maximumTagLength = 64
    /// Optional headers with a fixed set of values.
    private static let enumeratedHeaders: [(HTTPField.Name, Set<String>)] = [
        (.wnsCachePolicy, ["cache", "no-cache"]),
        (.wnsRequestForStatus, ["true", "false"]),
        (.wnsSuppressPopup, ["true", "false"]),
        (.wnsPriority, ["1", "2", "3", "4"]),
    ]

    /// Headers kept in a delivery record: every `x-wns-*` header and `content-type`.
    static func recordedHeaders(_ headers: HTTPFields) -> RecordedHeaders {
        RecordedHeaders(headers) { $0.hasPrefix("x-wns-") || $0 == "content-type" }
    }

    /// Checks `X-WNS-Type`, `Content-Type`, `X-WNS-Tag`, `X-WNS-Group`, `X-WNS-TTL` and the enumerated headers
    /// (`X-WNS-Priority` 1 to 4 among them).
    static func validateHeaders(_ headers: HTTPFields) throws(WNSError) -> WNSNotificationType {
        guard let type = headers[.wnsType].flatMap(WNSNotificationType.init(rawValue:)) else {
            throw .badRequest("X-WNS-Type must be wns/toast, wns/tile, wns/badge or wns/raw.")
        }
        let contentType = headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard contentType == type.contentType else {
            throw .badRequest("Content-Type must be \(type.contentType) for \(type.rawValue).")
        }
        for name in [HTTPField.Name.wnsTag, .wnsGroup] {
            if let value = headers[name], value.isEmpty || value.count > maximumTagLength {
                throw .badRequest("\(name) must be 1 to \(maximumTagLength) characters.")
            }
        }
        if let ttl = headers[.wnsTTL], (Int(ttl) ?? -1) < 0 {
            throw .badRequest("X-WNS-TTL must be a number of seconds.")
        }
        for (name, values) in enumeratedHeaders {
            if let value = headers[name], !values.contains(value.lowercased()) {
                throw .badRequest("\(name) must be one of: \(values.sorted().joined(separator: ", ")).")
            }
        }
        return type
    }

    /// The body of a notification: 1 to 5000 bytes; well-formed XML whose root element is the type's
    /// (`<toast>`, `<tile>`, `<badge>`) unless raw. Answers the body as text.
    static func validatePayload(_ body: [UInt8], type: WNSNotificationType) throws(WNSError) -> String {
        guard !body.isEmpty else { throw .badRequest("The notification payload is empty.") }
        guard body.count <= maximumPayloadSize else { throw .payloadTooLarge }
        let text = String(decoding: body, as: UTF8.self)
        if type != .raw {
            // WNS refuses XML that is not well-formed (an unescaped & in a text, an unclosed element) with 400.
            let parser = XMLParser(data: Data(body))
            guard parser.parse() else {
                throw .badRequest("The XML payload is not well-formed (line \(parser.lineNumber), column \(parser.columnNumber)).")
            }
            let expected = String(type.rawValue.dropFirst("wns/".count))
            guard rootElement(of: text) == expected else {
                throw .badRequest("The XML payload must have a <\(expected)> root element.")
            }
        }
        return text
    }

    /// Checks an `X-WNS-Match` header of a DELETE: `type:wns/toast;` then `all`, `tag=`, `group=`,
    /// or `group=…;tag=…`.
    static func validateMatch(_ match: String?) throws(WNSError) {
        let prefix = "type:wns/toast;"
        guard let match, match.hasPrefix(prefix) else {
            throw .badRequest("X-WNS-Match must start with type:wns/toast;")
        }
        let criteria = match.dropFirst(prefix.count).split(separator: ";", omittingEmptySubsequences: false)
        let names = criteria.map { $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? "" }
        let valid = criteria == ["all"]
            || [["tag"], ["group"], ["group", "tag"]].contains(names)
            && criteria.allSatisfy { $0.split(separator: "=", maxSplits: 1).count == 2 }
        guard valid else {
            throw .badRequest("X-WNS-Match must be type:wns/toast; followed by all, tag=…, group=… or group=…;tag=….")
        }
    }

    /// An `X-WNS-Msg-ID`: 16 hexadecimal digits.
    static func messageID() -> String {
        let digits = String(UInt64.random(in: .min ... .max), radix: 16, uppercase: true)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// The name of the first element, past an XML declaration, comments and whitespace.
    private static func rootElement(of text: String) -> String? {
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "<") {
            let tag = rest[rest.index(after: open)...]
            if tag.hasPrefix("?") || tag.hasPrefix("!") {
                guard let close = tag.firstIndex(of: ">") else { return nil }
                rest = tag[tag.index(after: close)...]
                continue
            }
            return String(tag.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
        }
        return nil
    }
}

extension HTTPField.Name {
    static let wnsType = Self("x-wns-type")!
    static let wnsTag = Self("x-wns-tag")!
    static let wnsGroup = Self("x-wns-group")!
    static let wnsTTL = Self("x-wns-ttl")!
    static let wnsMatch = Self("x-wns-match")!
    static let wnsCachePolicy = Self("x-wns-cache-policy")!
    static let wnsRequestForStatus = Self("x-wns-requestforstatus")!
    static let wnsSuppressPopup = Self("x-wns-suppresspopup")!
    static let wnsPriority = Self("x-wns-priority")!
    static let wnsStatus = Self("x-wns-status")!
    static let wnsDeviceConnectionStatus = Self("x-wns-deviceconnectionstatus")!
    static let wnsErrorDescription = Self("x-wns-error-description")!
    static let wnsMessageID = Self("x-wns-msg-id")!
}
