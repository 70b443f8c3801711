import Foundation
import NotifyModels
import Testing

@testable import IngestCore

@Suite struct NotificationValidatorTests {
    let validator = NotificationValidator()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    private func visual(_ title: String = "Hi") -> NotificationPayload {
        NotificationPayload(visualContent: VisualContent(title: title, body: "Body"))
    }

    private func field(of request: NotificationRequest) -> String? {
        do {
            _ = try validator.validate(request, now: now)
            return nil
        } catch {
            return error.field
        }
    }

    @Test func acceptsAMinimalNotificationWithDefaults() throws {
        let validated = try validator.validate(NotificationRequest(userId: "alice", payload: visual()), now: now)
        #expect(validated.userId == "alice")
        #expect(validated.content.priority == .high)
        #expect(validated.content.expirationDateTime == now.addingTimeInterval(30 * 86400))
        #expect(validated.content.isVisual)
    }

    @Test("a target is a userId, a subscriptionId alone, a userId with an eventSource, or an eventSource")
    func targets() {
        #expect(field(of: NotificationRequest(payload: visual())) == "userId")
        #expect(field(of: NotificationRequest(userId: "", payload: visual())) == "userId")
        #expect(field(of: NotificationRequest(eventSource: "news", payload: visual())) == nil)
        #expect(field(of: NotificationRequest(userId: "a", eventSource: "news", payload: visual())) == nil)
        #expect(field(of: NotificationRequest(subscriptionId: UUID().uuidString, payload: visual())) == nil)
        #expect(field(of: NotificationRequest(subscriptionId: "not-a-uuid", payload: visual())) == "subscriptionId")
        #expect(field(of: NotificationRequest(userId: "a", subscriptionId: UUID().uuidString, payload: visual())) == "subscriptionId")
        #expect(field(of: NotificationRequest(subscriptionId: UUID().uuidString, eventSource: "news", payload: visual())) == "subscriptionId")
        #expect(field(of: NotificationRequest(eventSource: "bad name", payload: visual())) == "eventSource")
    }

    @Test("polling devices are never pushed: naming them in targetPolicy.platformTypes is refused naming the entry")
    func pollingIsNoPushTarget() {
        let request = NotificationRequest(userId: "a", targetPolicy: TargetPolicy(platformTypes: [.apns, .polling]), payload: visual())
        #expect(field(of: request) == "targetPolicy.platformTypes[1]")
    }

    @Test("where narrows a broadcast: refused with userId or subscriptionId, empty, or with a value that is not a scalar, naming the field")
    func memberFilterIsChecked() {
        func request(userId: String? = nil, eventSource: String? = "teams", _ filter: [String: JSONValue]) -> NotificationRequest {
            NotificationRequest(userId: userId, eventSource: eventSource, payload: visual(), where: filter)
        }
        #expect(field(of: request(["team": .string("red"), "level": .number(3), "lead": .bool(true)])) == nil)
        #expect(field(of: request(userId: "a", ["team": .string("red")])) == "where")
        #expect(field(of: request(userId: "a", eventSource: nil, ["team": .string("red")])) == "where")
        #expect(field(of: request([:])) == "where")
        #expect(field(of: request(["team": .array([])])) == "where.team")
        #expect(field(of: request(["team": .string(String(repeating: "x", count: 257))])) == "where.team")
        let many = Dictionary(uniqueKeysWithValues: (0...MembershipParameters.maximumConditions).map { ("k\($0)", JSONValue.bool(true)) })
        #expect(field(of: request(many)) == "where")
    }

    @Test func requiresAPayloadWithContent() {
        #expect(field(of: NotificationRequest(userId: "a")) == "payload")
        #expect(field(of: NotificationRequest(userId: "a", payload: NotificationPayload())) == "payload")
        #expect(field(of: NotificationRequest(userId: "a", payload: NotificationPayload(visualContent: VisualContent()))) == "payload.visualContent")
    }

    @Test func expirationIsInTheFutureAndAtMostThirtyDaysAhead() {
        #expect(field(of: NotificationRequest(userId: "a", expirationDateTime: now.addingTimeInterval(-1), payload: visual())) == "expirationDateTime")
        #expect(field(of: NotificationRequest(userId: "a", expirationDateTime: now.addingTimeInterval(31 * 86400), payload: visual())) == "expirationDateTime")
        #expect(field(of: NotificationRequest(userId: "a", expirationDateTime: now.addingTimeInterval(29 * 86400), payload: visual())) == nil)
    }

    @Test func rejectsAPayloadLargerThanAPNsAccepts() throws {
        let request = NotificationRequest(userId: "a", payload: NotificationPayload(visualContent: VisualContent(title: String(repeating: "x", count: 4100))))
        #expect(throws: ValidationError.self) { try validator.validate(request, now: now) }
        do {
            _ = try validator.validate(request, now: now)
        } catch {
            #expect(error.code == "payload_too_large")
            #expect(error.field == "payload")
        }
    }

    @Test("a notification whose Web Push body would pass 4,096 octets once encrypted is refused naming payload, unless it cannot go to Web Push")
    func webPushSizeIsChecked() {
        // Grows app data until the Web Push body, not the APNs payload, is what is too large.
        var pad = 3000
        func request(_ platforms: [Platform]?) -> NotificationRequest {
            NotificationRequest(
                userId: "a", targetPolicy: platforms.map { TargetPolicy(platformTypes: $0) },
                payload: NotificationPayload(rawContent: "r"), push: PushOptions(data: ["pad": .string(String(repeating: "x", count: pad))]))
        }
        while field(of: request(nil)) == nil, pad < 5000 { pad += 1 }
        #expect(field(of: request(nil)) == "payload", "refused for Web Push at \(pad) bytes of data")
        #expect(field(of: request([.apns, .fcm])) == nil, "the same notification for APNs and FCM only is accepted at \(pad) bytes")
    }

    private func refusal(of request: NotificationRequest) -> ValidationError? {
        do {
            _ = try validator.validate(request, now: now)
            return nil
        } catch {
            return error
        }
    }

    private func dataRequest(_ key: String, _ platforms: [Platform]? = nil) -> NotificationRequest {
        NotificationRequest(
            userId: "a", targetPolicy: platforms.map { TargetPolicy(platformTypes: $0) }, payload: visual(),
            push: PushOptions(data: [key: .string("x")]))
    }

    @Test("app data takes every name on every provider: the keys notify writes, each provider's own (aps, FCM's from and google…) and the usual ones")
    func appDataNamesAreFree() {
        let names = [
            "title", "body", "category", "sound", "url", "data", "orderId", "aps", "notify", "rawContent", "imageUrl", "alert", "from",
            "notification", "message_type", "google.c.a", "gcm.n.e", "notifyId", "notifySeq", "notifyKind", "notifyUrl", "badge",
        ]
        for key in names {
            #expect(field(of: dataRequest(key)) == nil, "\(key)")
            #expect(field(of: dataRequest(key, [.apnsVoip])) == nil, "\(key) on apns-voip")
        }
    }

    @Test("push.url is an https URL with a host or one of the app's own scheme; script, file, plain http and malformed links are refused naming push.url")
    func deepLinks() {
        func field(_ url: String) -> String? { self.field(of: NotificationRequest(userId: "a", payload: visual(), push: PushOptions(url: url))) }
        for url in ["https://example.com/orders/42?tab=a#b", "myapp://orders/42", "com.example.app:/orders", "HTTPS://EXAMPLE.COM"] {
            #expect(field(url) == nil, "\(url)")
        }
        for url in [
            "javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,<script>", "file:///etc/passwd", "vbscript:x", "http://example.com",
            "intent://scan#Intent;end", "https:///no-host", "https://user:pw@example.com/", "orders/42", "//example.com/x", "myapp:",
            "https://example.com/a b", "https://exämple.com/", "", "https://example.com/" + String(repeating: "a", count: 2048),
        ] {
            #expect(field(url) == "push.url", "\(url)")
        }
        let recipient = NotificationRequest(
            eventSource: "news", payload: visual(), recipients: [Recipient(userId: "u", push: PushOptions(url: "javascript:x"))])
        #expect(self.field(of: recipient) == "recipients[0].push.url")
    }

    @Test("push.androidChannelId names a channel: 1 to 256 bytes, no control characters")
    func androidChannel() {
        func field(_ channel: String) -> String? {
            self.field(of: NotificationRequest(userId: "a", payload: visual(), push: PushOptions(androidChannelId: channel)))
        }
        #expect(field("orders") == nil)
        #expect(field("") == "push.androidChannelId")
        #expect(field(String(repeating: "c", count: 257)) == "push.androidChannelId")
        #expect(field("a\nb") == "push.androidChannelId")
    }

    @Test("push options a provider would refuse, or that mean nothing alone, are refused naming the option")
    func pushOptionsAreChecked() {
        func field(_ push: PushOptions) -> String? { self.field(of: NotificationRequest(userId: "a", payload: visual(), push: push)) }
        #expect(field(PushOptions(relevanceScore: 1.5)) == "push.relevanceScore")
        #expect(field(PushOptions(relevanceScore: -0.1)) == "push.relevanceScore")
        #expect(field(PushOptions(imageUrl: "ftp://cdn.example.com/a.png")) == "push.imageUrl")
        #expect(field(PushOptions(imageUrl: "parcel.png")) == "push.imageUrl")
        #expect(field(PushOptions(criticalSound: true)) == "push.criticalSound")
        #expect(field(PushOptions(titleLocArgs: ["42"])) == "push.titleLocArgs")
        #expect(field(PushOptions(bodyLocArgs: ["42"])) == "push.bodyLocArgs")
        #expect(field(PushOptions(
            sound: "chime.caf", criticalSound: true, subtitle: "s", titleLocKey: "T", titleLocArgs: ["1"], bodyLocKey: "B", bodyLocArgs: ["2"],
            imageUrl: "https://cdn.example.com/a.png", launchImage: "L", mutableContent: true, interruptionLevel: .critical, relevanceScore: 0.5)) == nil)
    }

    @Test("a notification FCM (data values as strings) or WNS (a toast, XML-escaped) would refuse for its size is refused naming payload, unless it cannot go there")
    func fcmAndWNSSizesAreChecked() {
        // App data that is not a string goes to FCM as its JSON text, escaped: 380 small objects fit APNs, not FCM.
        let objects = JSONValue.array(Array(repeating: .object(["k": .string("v")]), count: 380))
        let forFCM = { (platforms: [Platform]?) in
            NotificationRequest(
                userId: "a", targetPolicy: platforms.map { TargetPolicy(platformTypes: $0) }, payload: NotificationPayload(rawContent: "r"),
                push: PushOptions(data: ["items": objects]))
        }
        #expect(field(of: forFCM([.apns])) == nil, "the APNs payload fits")
        #expect(field(of: forFCM(nil)) == "payload")
        #expect(field(of: forFCM([.fcm])) == "payload")
        // Every & of a title becomes &amp; in a toast: 1,000 of them fit APNs, not WNS's 5,000 bytes.
        let forWNS = { (platforms: [Platform]?) in
            NotificationRequest(
                userId: "a", targetPolicy: platforms.map { TargetPolicy(platformTypes: $0) },
                payload: NotificationPayload(visualContent: VisualContent(title: String(repeating: "&", count: 1000))))
        }
        #expect(field(of: forWNS([.apns, .fcm, .webpush])) == nil)
        #expect(field(of: forWNS([.wns])) == "payload")
    }

    @Test("a push's own title and body: empty is refused naming the field; with no visual content they make an alert")
    func alertTextIsChecked() throws {
        #expect(field(of: NotificationRequest(userId: "a", payload: visual(), push: PushOptions(title: ""))) == "push.title")
        #expect(field(of: NotificationRequest(userId: "a", payload: visual(), push: PushOptions(body: ""))) == "push.body")
        let raw = try validator.validate(
            NotificationRequest(userId: "a", payload: NotificationPayload(rawContent: "{}"), push: PushOptions(title: "hey user1", body: "alert")),
            now: now)
        #expect(raw.content.isAlert && raw.content.alertText == VisualContent(title: "hey user1", body: "alert"))
        #expect(raw.content.payload.visualContent == nil, "the stored notification keeps its own content")
    }

    @Test("a push's own text that makes a provider's body too large is refused naming it (its longer part), not payload")
    func alertTextSizeIsNamed() {
        let long = String(repeating: "x", count: 4100)
        #expect(field(of: NotificationRequest(userId: "a", payload: visual(), push: PushOptions(body: long))) == "push.body")
        #expect(field(of: NotificationRequest(userId: "a", payload: visual(), push: PushOptions(title: long, body: "short"))) == "push.title")
        // Every & becomes &amp; in a toast: the text fits APNs and FCM, not WNS.
        let ampersands = PushOptions(title: String(repeating: "&", count: 1000))
        func toward(_ platforms: [Platform]) -> NotificationRequest {
            NotificationRequest(userId: "a", targetPolicy: TargetPolicy(platformTypes: platforms), payload: visual(), push: ampersands)
        }
        #expect(field(of: toward([.apns, .fcm])) == nil)
        #expect(field(of: toward([.wns])) == "push.title")
        // Too large without the text too: the payload is what is named.
        let huge = NotificationPayload(visualContent: VisualContent(title: long))
        #expect(field(of: NotificationRequest(userId: "a", payload: huge, push: PushOptions(body: "b"))) == "payload")
    }

    @Test("a broadcast member's own text is checked as that member's push: a size refusal names recipients[i].push.body")
    func memberAlertTextIsChecked() {
        let members = [
            Recipient(userId: "ana", push: PushOptions(title: "hey ana")),
            Recipient(userId: "ben", push: PushOptions(body: String(repeating: "x", count: 4100))),
        ]
        #expect(field(of: NotificationRequest(eventSource: "news", payload: visual(), recipients: members)) == "recipients[1].push.body")
        let empty = [Recipient(userId: "ana", push: PushOptions(title: ""))]
        #expect(field(of: NotificationRequest(eventSource: "news", payload: visual(), recipients: empty)) == "recipients[0].push.title")
    }

    @Test("pushRecipientsOnly: a broadcast stored unpushed, pushed to the members with a push of their own; refused without recipients")
    func pushRecipientsOnly() throws {
        let request = NotificationRequest(
            eventSource: "room-7", payload: NotificationPayload(rawContent: "{}"), push: PushOptions(sound: "chime.caf"),
            recipients: [
                Recipient(userId: "user1", push: PushOptions(title: "hey user1", body: "alert")),
                Recipient(userId: "user2", push: PushOptions(title: "hey user2")),
                Recipient(userId: "user3"),
            ],
            pushRecipientsOnly: true)
        let validated = try validator.validate(request, now: now)
        #expect(validated.content.delivery == .none && validated.content.push?.sound == "chime.caf")
        #expect(validated.recipientPush?.keys.sorted() == ["user1", "user2"], "user3, listed without a push, shares the broadcast's: none")
        let user1 = try #require(validated.recipientPush?["user1"])
        #expect(user1.delivery == nil && user1.sound == "chime.caf" && user1.title == "hey user1" && user1.body == "alert")

        #expect(field(of: NotificationRequest(eventSource: "room-7", payload: visual(), pushRecipientsOnly: true)) == "pushRecipientsOnly")
        #expect(field(of: NotificationRequest(userId: "a", payload: visual(), pushRecipientsOnly: true)) == "pushRecipientsOnly")
        #expect(field(of: NotificationRequest(userId: "a", payload: visual(), pushRecipientsOnly: false)) == nil)
    }

    @Test("a recipient list names each user once: the second naming of one is refused at its index, with or without a source")
    func recipientsNameEachUserOnce() throws {
        try NotificationValidator.requireEachUserOnce([Recipient(userId: "ana"), Recipient(userId: "Ana"), Recipient(userId: nil), Recipient(userId: nil)])
        do {
            try NotificationValidator.requireEachUserOnce([Recipient(userId: "ana"), Recipient(userId: "ben"), Recipient(userId: "ana")])
            Issue.record("ana named twice was accepted")
        } catch {
            #expect(error.code == "invalid_field" && error.field == "recipients[2].userId", "\(error)")
        }
        let broadcast = NotificationRequest(
            eventSource: "news", payload: visual(), recipients: [Recipient(userId: "ana"), Recipient(userId: "ana", push: PushOptions(sound: "a"))])
        #expect(field(of: broadcast) == "recipients[1].userId")
    }
}

@Suite struct SubscriptionRequestTests {
    @Test func apnsTokensAreHex() throws {
        let token = String(repeating: "AB", count: 32)
        let valid = try SubscriptionRequest(platform: .apns, pushToken: token).validated()
        #expect(valid.pushToken == token.lowercased())
        #expect(throws: ValidationError.self) { try SubscriptionRequest(platform: .apns, pushToken: "xyz").validated() }
        #expect(throws: ValidationError.self) { try SubscriptionRequest(pushToken: token).validated() }
    }
}
