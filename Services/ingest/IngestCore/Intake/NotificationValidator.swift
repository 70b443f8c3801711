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
        /// A broadcast's members with push options of their own (`recipients` with `eventSource` alone).
        public var recipientPush: [String: PushOptions]?
        /// A broadcast's `where`: the members whose parameters hold every pair.
        public var memberFilter: [String: JSONValue]?
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
        if let filter = request.where {
            guard eventSource != nil, userId == nil, subscriptionId == nil else {
                throw ValidationError.invalid("where", "where narrows a broadcast: give it with eventSource alone")
            }
            if filter.isEmpty { throw ValidationError.invalid("where", "where names at least one parameter, or is left out") }
            try MembershipParameters.validate(filter, field: "where", maximumKeys: MembershipParameters.maximumConditions)
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
        if let polling = request.targetPolicy?.platformTypes?.firstIndex(of: .polling) {
            throw ValidationError.invalid("targetPolicy.platformTypes[\(polling)]", "polling devices are never pushed: they read the changes feed")
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
        if let push = request.push { try checkPushOptions(push) }
        if request.pushRecipientsOnly == true, request.recipients == nil {
            throw ValidationError.invalid(
                "pushRecipientsOnly", "pushRecipientsOnly goes with recipients: it pushes only the recipients with a push of their own")
        }

        var content = NotificationContent(
            appNotificationId: appNotificationId,
            groupName: groupName,
            priority: request.priority ?? .high,
            expirationDateTime: expiration,
            displayTimeToLive: request.displayTimeToLive,
            platformTypes: request.targetPolicy?.platformTypes,
            payload: payload,
            push: request.push
        )
        let size = try Self.check(
            content, limit: APNsPayloadBuilder.maximumPayloadBytes, "the APNs payload would be %d bytes; APNs accepts at most %d",
            platform: nil, size: APNsPayloadBuilder.worstCaseSize)
        // The other providers' bodies are built only where they can pass their limits, so the checks cost nothing for
        // the rest (building the Web Push body for every notification cost ingest a third of its batch throughput):
        // the Web Push plaintext holds nothing the APNs payload does not (it lacks the aps wrapper); FCM's data values
        // are strings, so app data that is not one is escaped (twice the APNs payload at most); a toast escapes XML's
        // five characters, each up to six bytes.
        let platforms = content.platformTypes
        if size + ProviderPayloads.webPushEncryptionOverhead > ProviderPayloads.webPushMaximumBody, platforms?.contains(.webpush) ?? true {
            try Self.check(
                content, limit: ProviderPayloads.webPushMaximumBody,
                "the Web Push body would be %d octets once encrypted; push services accept at most %d (RFC 8030)", platform: .webpush,
                size: ProviderPayloads.webPushWorstCaseBody)
        }
        if size * 2 + 128 > ProviderPayloads.fcmMaximumPayload, platforms?.contains(.fcm) ?? true {
            try Self.check(
                content, limit: ProviderPayloads.fcmMaximumPayload,
                "the FCM message's data and notification would be %d bytes; FCM accepts at most %d", platform: .fcm,
                size: ProviderPayloads.fcmWorstCasePayload)
        }
        if content.isAlert, size * 6 + 512 > ProviderPayloads.wnsMaximumPayload, platforms?.contains(.wns) ?? true {
            try Self.check(
                content, limit: ProviderPayloads.wnsMaximumPayload, "the WNS toast would be %d bytes; WNS accepts at most %d", platform: .wns,
                size: ProviderPayloads.wnsWorstCasePayload)
        }
        let recipientPush = try recipientPush(of: request, now: now)
        // A broadcast that pushes only its listed members is, for everyone else, stored and in the feed, unpushed.
        if request.pushRecipientsOnly == true { content.push = Self.unpushed(content.push) }
        return Validated(
            userId: userId, subscriptionId: subscriptionId, eventSource: eventSource, content: content, recipientPush: recipientPush,
            memberFilter: request.where)
    }

    /// Push options that leave a recipient unpushed (`delivery: none`), for one `pushRecipientsOnly` does not push.
    static func unpushed(_ push: PushOptions?) -> PushOptions {
        var options = push ?? PushOptions()
        options.delivery = PushDelivery.none
        return options
    }

    /// A broadcast's members with push options of their own (`recipients` with `eventSource` alone): each member's
    /// options over the notification's, checked as the notification that member's devices get. With
    /// `pushRecipientsOnly`, a member listed without `push` is left out (it gets the broadcast's, unpushed).
    private func recipientPush(of request: NotificationRequest, now: Date) throws(ValidationError) -> [String: PushOptions]? {
        guard let recipients = request.recipients else { return nil }
        guard request.eventSource != nil, request.userId == nil, request.subscriptionId == nil else {
            throw .invalid("recipients", "recipients goes with eventSource alone (members' own push options) or names the users itself")
        }
        try Self.requireEachUserOnce(recipients)
        var options: [String: PushOptions] = [:]
        for (index, recipient) in recipients.enumerated() {
            let field = "recipients[\(index)]"
            guard let userId = try checkIdentifier(recipient.userId, field: "\(field).userId", required: true) else { continue }
            if request.pushRecipientsOnly == true, recipient.push == nil { continue }
            var member = request
            member.recipients = nil
            member.pushRecipientsOnly = nil
            member.push = (request.push ?? PushOptions()).overridden(by: recipient.push)
            // Without options of its own the member's notification is the one checked above.
            if recipient.push != nil {
                do {
                    _ = try validate(member, now: now)
                } catch {
                    var pathed = error
                    pathed.field = pathed.field.map { "\(field).\($0)" } ?? field
                    throw pathed
                }
            }
            options[userId] = member.push
        }
        return options
    }

    /// Refuses a recipient list that names a user more than once (a user gets one copy, with one set of push options),
    /// naming the repeated `recipients[i].userId`.
    public static func requireEachUserOnce(_ recipients: [Recipient]) throws(ValidationError) {
        var named = Set<String>()
        for (index, recipient) in recipients.enumerated() {
            guard let userId = recipient.userId, !named.insert(userId).inserted else { continue }
            throw .invalid("recipients[\(index)].userId", "recipients[\(index)].userId names \(userId) a second time: a user may be named once")
        }
    }

    /// Answers the size of `content`'s body for a provider as `size` counts it, and refuses the notification when that is
    /// over the provider's `limit` (`what` says so, with the size and the limit for its two `%d`; `platform`, the
    /// provider a notification may leave out, is named too). The refusal names the push's own alert text (its longer
    /// part, `push.body` or `push.title`) when the notification would fit without it, else `payload`.
    @discardableResult
    private static func check(
        _ content: NotificationContent, limit: Int, _ what: String, platform: Platform?, size: (NotificationContent) -> Int
    ) throws(ValidationError) -> Int {
        let measured = size(content)
        guard measured > limit else { return measured }
        var field = "payload"
        if let push = content.push, push.hasAlertText {
            var withoutText = content
            withoutText.push?.title = nil
            withoutText.push?.body = nil
            if size(withoutText) <= limit {
                field = (push.body?.utf8.count ?? -1) >= (push.title?.utf8.count ?? -1) ? "push.body" : "push.title"
            }
        }
        let leaveOut = platform.map { "; leave \($0.rawValue) out of targetPolicy.platformTypes or send less" } ?? ""
        throw ValidationError(code: "payload_too_large", message: String(format: what, measured, limit) + leaveOut, field: field)
    }

    /// The push options' own rules: what a provider would refuse, or what means nothing alone.
    private func checkPushOptions(_ push: PushOptions) throws(ValidationError) {
        if let url = push.url, let reason = DeepLinkRule.refusal(of: url) { throw ValidationError.invalid("push.url", reason) }
        if let channel = push.androidChannelId,
            channel.isEmpty || channel.utf8.count > limits.maximumIdentifierLength || channel.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            throw ValidationError.invalid(
                "push.androidChannelId", "androidChannelId must be 1 to \(limits.maximumIdentifierLength) bytes without control characters")
        }
        if let badge = push.badge, !(0...99_999).contains(badge) {
            throw ValidationError.invalid("push.badge", "badge must be between 0 and 99999")
        }
        if let score = push.relevanceScore, !(0...1).contains(score) {
            throw ValidationError.invalid("push.relevanceScore", "relevanceScore must be between 0 and 1")
        }
        if let image = push.imageUrl {
            guard let url = URL(string: image), url.scheme == "https" || url.scheme == "http", url.host != nil else {
                throw ValidationError.invalid("push.imageUrl", "imageUrl must be an http or https URL")
            }
        }
        if push.criticalSound == true, push.sound == nil {
            throw ValidationError.invalid("push.criticalSound", "criticalSound needs push.sound, the sound to play (\"default\" for the system's)")
        }
        if push.titleLocArgs != nil, push.titleLocKey == nil {
            throw ValidationError.invalid("push.titleLocArgs", "titleLocArgs needs titleLocKey, the format they fill")
        }
        if push.bodyLocArgs != nil, push.bodyLocKey == nil {
            throw ValidationError.invalid("push.bodyLocArgs", "bodyLocArgs needs bodyLocKey, the format they fill")
        }
        if push.title?.isEmpty == true {
            throw ValidationError.invalid("push.title", "push.title must not be empty: leave it out to show visualContent's title")
        }
        if push.body?.isEmpty == true {
            throw ValidationError.invalid("push.body", "push.body must not be empty: leave it out to show visualContent's body")
        }
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
