import Foundation
import NotifyAPNsCore
import NotifyModels

/// Checks a `NotificationRequest` and turns it into what storage keeps.
public struct NotificationValidator: Sendable {
    /// Limits an operator may tune; the defaults follow the public interface.
    public struct Limits: Sendable {
        public var maximumLifetime: TimeInterval
        public var maximumIdentifierLength: Int
        public var maximumRawContentBytes: Int
        public init(maximumLifetime: TimeInterval = 30 * 24 * 3600, maximumIdentifierLength: Int = 256, maximumRawContentBytes: Int = 3072) {
            self.maximumLifetime = maximumLifetime
            self.maximumIdentifierLength = maximumIdentifierLength
            self.maximumRawContentBytes = maximumRawContentBytes
        }
    }

    /// A request that passed validation, with its target: a user (`userId`), one device (`subscriptionId`), a user's
    /// devices in an event source (`userId` and `eventSource`), or every member of an event source (`eventSource`).
    public struct Validated: Sendable, Equatable {
        public var userId: String?
        public var subscriptionId: UUID?
        public var eventSource: String?
        public var content: NotificationContent
    }

    public var limits: Limits
    /// Allowed clock skew for an expiration that is "at most 30 days ahead".
    private let clockSkew: TimeInterval = 60

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    public func validate(_ request: NotificationRequest, now: Date = Date()) throws(ValidationError) -> Validated {
        if request.userId == nil, request.subscriptionId == nil, request.eventSource == nil {
            throw ValidationError(code: "missing_field", message: "a target is required: userId, subscriptionId or eventSource", field: "userId")
        }
        var subscriptionId: UUID?
        if let text = request.subscriptionId {
            if request.userId != nil || request.eventSource != nil {
                throw ValidationError.invalid("subscriptionId", "subscriptionId names one device: give it without userId and eventSource")
            }
            guard let id = UUID(uuidString: text) else { throw ValidationError.invalid("subscriptionId", "subscriptionId must be a UUID") }
            subscriptionId = id
        }
        let userId = try checkIdentifier(request.userId, field: "userId", required: false)
        let eventSource = try checkIdentifier(request.eventSource, field: "eventSource", required: false)
        if let eventSource, !EventSourceRequest.isValidName(eventSource) {
            throw ValidationError.invalid("eventSource", "eventSource names an event source: 1 to 100 characters of A-Z a-z 0-9 . _ : -")
        }
        let appNotificationId = try checkIdentifier(request.appNotificationId, field: "appNotificationId", required: false)
        let groupName = try checkIdentifier(request.groupName, field: "groupName", required: false)

        let latestExpiration = now.addingTimeInterval(limits.maximumLifetime)
        let expiration = request.expirationDateTime ?? latestExpiration
        if expiration <= now {
            throw ValidationError.invalid("expirationDateTime", "expirationDateTime must be in the future")
        }
        if expiration > latestExpiration.addingTimeInterval(clockSkew) {
            throw ValidationError.invalid("expirationDateTime", "expirationDateTime may be at most \(Int(limits.maximumLifetime / 86400)) days ahead")
        }
        if let ttl = request.displayTimeToLive, ttl <= 0 || Double(ttl) > limits.maximumLifetime {
            throw ValidationError.invalid("displayTimeToLive", "displayTimeToLive must be between 1 and \(Int(limits.maximumLifetime)) seconds")
        }
        if let platforms = request.targetPolicy?.platformTypes, platforms.isEmpty {
            throw ValidationError.invalid("targetPolicy.platformTypes", "platformTypes must name at least one platform, or be left out")
        }

        guard let payload = request.payload else { throw .missing("payload") }
        if payload.rawContent == nil && payload.visualContent == nil {
            throw ValidationError(code: "missing_field", message: "payload needs rawContent or visualContent", field: "payload")
        }
        if let raw = payload.rawContent, raw.utf8.count > limits.maximumRawContentBytes {
            throw ValidationError(code: "payload_too_large", message: "rawContent may be at most \(limits.maximumRawContentBytes) bytes", field: "payload.rawContent")
        }
        if let visual = payload.visualContent, (visual.title ?? "").isEmpty && (visual.body ?? "").isEmpty {
            throw ValidationError(code: "missing_field", message: "visualContent needs a title or a body", field: "payload.visualContent")
        }
        if let data = request.push?.data {
            for key in data.keys where ProviderPayloads.reservedKeys.contains(key) {
                throw ValidationError.invalid("push.data.\(key)", "the key \(key) is reserved")
            }
        }

        let content = NotificationContent(
            appNotificationId: appNotificationId,
            groupName: groupName,
            priority: request.priority ?? .high,
            expirationDateTime: expiration,
            displayTimeToLive: request.displayTimeToLive,
            platformTypes: request.targetPolicy?.platformTypes,
            payload: payload,
            push: request.push
        )
        let size = APNsPayloadBuilder.worstCaseSize(of: content)
        if size > APNsPayloadBuilder.maximumPayloadBytes {
            throw ValidationError(
                code: "payload_too_large",
                message: "the APNs payload would be \(size) bytes; APNs accepts at most \(APNsPayloadBuilder.maximumPayloadBytes)",
                field: "payload")
        }
        // The Web Push plaintext holds nothing the APNs payload does not (it lacks the aps wrapper), so only a payload
        // this close to the limit needs the Web Push body built: the check costs nothing for the others (building it for
        // every notification cost ingest a third of its batch throughput).
        if size + ProviderPayloads.webPushEncryptionOverhead > ProviderPayloads.webPushMaximumBody, content.platformTypes?.contains(.webpush) ?? true {
            let body = ProviderPayloads.webPushWorstCaseBody(of: content)
            if body > ProviderPayloads.webPushMaximumBody {
                throw ValidationError(
                    code: "payload_too_large",
                    message: "the Web Push body would be \(body) octets once encrypted; push services accept at most \(ProviderPayloads.webPushMaximumBody) (RFC 8030); leave webpush out of targetPolicy.platformTypes or send less",
                    field: "payload")
            }
        }
        return Validated(userId: userId, subscriptionId: subscriptionId, eventSource: eventSource, content: content)
    }

    private func checkIdentifier(_ value: String?, field: String, required: Bool) throws(ValidationError) -> String? {
        guard let value else {
            if required { throw .missing(field) }
            return nil
        }
        if value.isEmpty {
            throw ValidationError.invalid(field, "\(field) must not be empty")
        }
        if value.utf8.count > limits.maximumIdentifierLength {
            throw ValidationError.invalid(field, "\(field) may be at most \(limits.maximumIdentifierLength) bytes")
        }
        return value
    }
}
