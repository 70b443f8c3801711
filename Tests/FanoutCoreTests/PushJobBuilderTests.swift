import Foundation
import NotifyAMQP
import NotifyModels
import NotifyStore
import NotifyWire
import Testing

@testable import FanoutCore

/// Fanout's job building in-process: who is pushed what, for one change.
@Suite struct PushJobBuilderTests {
    private static let now = Date(timeIntervalSince1970: 1_800_000_000)

    private static func device(_ platform: Platform) -> PushDevice {
        PushDevice(
            subscriptionId: UUID(), platform: platform.rawValue, pushToken: "token-\(UUID())",
            keys: platform == .webpush ? #"{"p256dh":"BPk","auth":"a1"}"# : nil, expiresAt: now.addingTimeInterval(3600))!
    }

    private static func event(
        _ kind: ChangeKind, visual: Bool = true, platformTypes: [Platform]? = nil, origin: UUID? = nil, eventSource: String? = nil
    ) -> ChangeEvent {
        let content = NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: now.addingTimeInterval(600), displayTimeToLive: nil,
            platformTypes: platformTypes,
            payload: NotificationPayload(rawContent: "r", visualContent: visual ? VisualContent(title: "T", body: "B") : nil), push: nil)
        return ChangeEvent(
            appId: "app", userId: eventSource == nil ? "u" : "", sequence: 7, kind: kind, notificationId: UUID(),
            content: kind.isContentChange ? content : nil, readState: .unread, userActionState: .noInteraction, originSubscriptionId: origin,
            badge: 3, changedAt: now, eventSource: eventSource)
    }

    @Test("a publish that named devices pushes only those of the user's devices (none when it named none)")
    func namedDevicesOnly() {
        let devices = [Platform.apns, .fcm, .webpush].map(Self.device)
        var event = Self.event(.created)
        event.pushSubscriptionIds = [devices[1].subscriptionId]
        #expect(PushJobBuilder.jobs(for: event, devices: devices).map(\.subscriptionId) == [devices[1].subscriptionId])
        event.pushSubscriptionIds = []
        #expect(PushJobBuilder.jobs(for: event, devices: devices).isEmpty)
    }

    @Test("a visual notification is an alert to every device but the PushKit one, each with its provider's payload and the same collapse id")
    func visualNotificationReachesEveryDevice() throws {
        let devices = [Platform.apns, .fcm, .wns, .webpush, .apnsVoip].map(Self.device)
        let event = Self.event(.created)
        let jobs = PushJobBuilder.jobs(for: event, devices: devices)
        #expect(jobs.map(\.platform) == [.apns, .fcm, .wns, .webpush])
        #expect(jobs.allSatisfy { $0.isAlert && $0.priority == .high && $0.collapseId == event.notificationId.lowercasedString })
        #expect(Set(jobs.map(\.pushId)).count == 4, "a push id per device")
        let apns = try #require(try JSONSerialization.jsonObject(with: Data(jobs[0].payload.utf8)) as? [String: Any])
        #expect((apns["aps"] as? [String: Any])?["badge"] as? Int == 3)
        #expect(jobs[3].keys == WebPushKeys(p256dh: "BPk", auth: "a1"))
    }

    @Test("an alert with a displayTimeToLive expires at the providers when its display time ends (FCM's ttl too), and carries its groupName; a background push neither")
    func displayTimeAndGroup() throws {
        let devices = [Platform.fcm, .wns].map(Self.device)
        var event = Self.event(.created)
        event.content?.displayTimeToLive = 90
        event.content?.groupName = "orders"
        let jobs = PushJobBuilder.jobs(for: event, devices: devices)
        #expect(jobs.allSatisfy { $0.expiration == Self.now.addingTimeInterval(90) && $0.displayGroup == "orders" })
        let fcm = try #require(try JSONSerialization.jsonObject(with: Data(jobs[0].payload.utf8)) as? [String: Any])
        #expect((fcm["android"] as? [String: Any])?["ttl"] as? String == "90s")
        event.content?.displayTimeToLive = 6000
        #expect(PushJobBuilder.jobs(for: event, devices: devices).allSatisfy { $0.expiration == Self.now.addingTimeInterval(600) }, "never past the notification's expiration")
        let background = PushJobBuilder.jobs(for: Self.event(.updated, visual: false), devices: devices)
        #expect(background.allSatisfy { $0.displayGroup == nil && $0.expiration == Self.now.addingTimeInterval(600) })
    }

    @Test("with visual fallback, a new notification with raw and visual content is a shoulder tap to iOS and an alert held back as its fallback; other devices get the alert at once")
    func visualFallback() throws {
        let devices = [Platform.apns, .fcm].map(Self.device)
        let event = Self.event(.created)
        let jobs = PushJobBuilder.jobs(for: event, devices: devices, visualFallback: true)
        #expect(jobs.map(\.platform) == [.apns, .fcm, .apns])
        #expect(!jobs[0].isAlert && !jobs[0].isVisualFallback && jobs[0].priority == .low)
        let tap = try #require(try JSONSerialization.jsonObject(with: Data(jobs[0].payload.utf8)) as? [String: Any])
        #expect((tap["aps"] as? [String: Any])?["alert"] == nil && (tap["aps"] as? [String: Any])?["content-available"] as? Int == 1)
        #expect(jobs[1].isAlert && !jobs[1].isVisualFallback)
        #expect(jobs[2].isAlert && jobs[2].isVisualFallback && jobs[2].pushId == jobs[0].pushId)
        #expect(PushJobBuilder.jobs(for: event, devices: devices).allSatisfy { $0.isAlert && !$0.isVisualFallback }, "off: alerts at once")
        #expect(PushJobBuilder.jobs(for: Self.event(.updated), devices: devices, visualFallback: true).count == 2, "only a new notification")
    }

    @Test("delivery silent: a background push with the content's data but nothing shown (none to a browser); none: no push; a later state change is pushed")
    func silentAndNoneDeliveries() throws {
        let devices = [Platform.apns, .fcm, .wns, .webpush].map(Self.device)
        var silent = Self.event(.created)
        silent.content?.push = PushOptions(sound: "chime.caf", delivery: .silent, data: ["orderId": .string("42")])
        let jobs = PushJobBuilder.jobs(for: silent, devices: devices)
        #expect(jobs.map(\.platform) == [.apns, .fcm, .wns], "a browser must show every push: it gets none")
        #expect(jobs.allSatisfy { !$0.isAlert && $0.priority == .low })
        let apns = try #require(try JSONSerialization.jsonObject(with: Data(jobs[0].payload.utf8)) as? [String: Any])
        let aps = try #require(apns["aps"] as? [String: Any])
        #expect(aps["alert"] == nil && aps["sound"] == nil && aps["content-available"] as? Int == 1)
        #expect((apns["data"] as? [String: Any])?["orderId"] as? String == "42" && apns["rawContent"] as? String == "r")
        #expect(!jobs[1].payload.contains(#""notification""#), "FCM: data only")
        #expect(!jobs[2].payload.hasPrefix("<toast"), "WNS: raw, not a toast")

        var none = Self.event(.created)
        none.content?.push = PushOptions(delivery: PushDelivery.none)
        #expect(PushJobBuilder.jobs(for: none, devices: devices).isEmpty)
        #expect(PushJobBuilder.jobs(for: Self.event(.stateChanged), devices: devices).map(\.platform) == [.apns, .fcm, .wns])
    }

    @Test("a browser (Web Push) is pushed only what it shows: a new or replaced alert; never a read, dismiss, deletion, expiry, raw or silent notification")
    func browsersGetOnlyAlerts() throws {
        let devices = [Platform.apns, .webpush].map(Self.device)
        for kind in [ChangeKind.created, .updated] {
            let jobs = PushJobBuilder.jobs(for: Self.event(kind), devices: devices)
            #expect(jobs.map(\.platform) == [.apns, .webpush], "\(kind): an alert reaches the browser")
            let shown = try #require(try JSONSerialization.jsonObject(with: Data(jobs[1].payload.utf8)) as? [String: Any])
            #expect(shown["title"] as? String == "T" && (shown["notify"] as? [String: Any])?["seq"] as? Int == 7, "with what to show and the sequence to sync to")
        }
        for kind in [ChangeKind.stateChanged, .deleted, .expired] {
            #expect(PushJobBuilder.jobs(for: Self.event(kind), devices: devices).map(\.platform) == [.apns], "\(kind): not to the browser")
        }
        #expect(PushJobBuilder.jobs(for: Self.event(.created, visual: false), devices: devices).map(\.platform) == [.apns], "raw content: not to the browser")
        var silent = Self.event(.created)
        silent.content?.push = PushOptions(delivery: .silent)
        #expect(PushJobBuilder.jobs(for: silent, devices: devices).map(\.platform) == [.apns], "silent: not to the browser")
        let broadcast = Self.event(.created, visual: false, eventSource: "news")
        #expect(PushJobBuilder.jobs(for: broadcast, devices: devices).map(\.platform) == [.apns], "a raw broadcast: not to the browser")
    }

    @Test("a push's own title and body are what every provider's alert shows, over the visual content's; with raw content only they make an alert")
    func pushTextOnEveryProvider() throws {
        func json(_ job: PushJob) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(job.payload.utf8)) as? [String: Any])
        }
        let devices = [Platform.apns, .fcm, .wns, .webpush].map(Self.device)
        for visual in [true, false] {
            var event = Self.event(.created, visual: visual)
            event.content?.push = PushOptions(title: "hey user1", body: "alert")
            let jobs = PushJobBuilder.jobs(for: event, devices: devices)
            #expect(jobs.map(\.platform) == [.apns, .fcm, .wns, .webpush] && jobs.allSatisfy(\.isAlert), "visual content: \(visual)")
            #expect((try json(jobs[0])["aps"] as? [String: Any])?["alert"] as? [String: String] == ["title": "hey user1", "body": "alert"])
            #expect(try json(jobs[1])["notification"] as? [String: String] == ["title": "hey user1", "body": "alert"])
            #expect(jobs[2].payload.contains("<text>hey user1</text><text>alert</text>"), "\(jobs[2].payload)")
            let webPush = try json(jobs[3])
            #expect(webPush["title"] as? String == "hey user1" && webPush["body"] as? String == "alert")
        }
        // Only the body given: the title is the visual content's.
        var event = Self.event(.created)
        event.content?.push = PushOptions(body: "for you")
        let fcm = try json(try #require(PushJobBuilder.jobs(for: event, devices: [Self.device(.fcm)]).first))
        #expect(fcm["notification"] as? [String: String] == ["title": "T", "body": "for you"])
    }

    @Test("a publish's own badge wins over the counted one; an app whose mode shows none (nil) gets none")
    func namedBadge() throws {
        let device = [Self.device(.apns)]
        var named = Self.event(.created)
        named.content?.push = PushOptions(badge: 9)
        func badge(_ event: ChangeEvent) throws -> Int? {
            let payload = try #require(PushJobBuilder.jobs(for: event, devices: device).first?.payload)
            return ((try JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any])?["aps"] as? [String: Any])?["badge"] as? Int
        }
        #expect(try badge(named) == 9)
        named.badge = nil
        #expect(try badge(named) == nil)
        #expect(try badge(Self.event(.stateChanged)) == 3)
    }

    @Test("push ids are the same when the same change is built again (a redelivery replaces, never stacks)")
    func pushIdsAreDeterministic() {
        let devices = [Platform.apns, .fcm].map(Self.device)
        let event = Self.event(.created)
        #expect(PushJobBuilder.jobs(for: event, devices: devices).map(\.pushId) == PushJobBuilder.jobs(for: event, devices: devices).map(\.pushId))
    }

    @Test("a state change is a low-priority background push to every device but the one that made it")
    func stateChangeSkipsItsOrigin() {
        let devices = [Platform.apns, .apns, .fcm].map(Self.device)
        let jobs = PushJobBuilder.jobs(for: Self.event(.stateChanged, origin: devices[0].subscriptionId), devices: devices)
        #expect(jobs.map(\.subscriptionId) == [devices[1].subscriptionId, devices[2].subscriptionId])
        #expect(jobs.allSatisfy { !$0.isAlert && $0.priority == .low })
    }

    @Test("platformTypes restricts the devices; apns-voip is reached only when named, and only by new content")
    func platformTypesFilter() {
        let devices = [Platform.apns, .fcm, .apnsVoip].map(Self.device)
        #expect(PushJobBuilder.jobs(for: Self.event(.created, platformTypes: [.fcm]), devices: devices).map(\.platform) == [.fcm])
        #expect(PushJobBuilder.jobs(for: Self.event(.created, platformTypes: [.apnsVoip]), devices: devices).map(\.platform) == [.apnsVoip])
        #expect(PushJobBuilder.jobs(for: Self.event(.deleted), devices: devices).map(\.platform) == [.apns, .fcm])
    }

    @Test("a broadcast leaves the badge alone")
    func broadcastCarriesNoBadge() throws {
        let jobs = PushJobBuilder.jobs(for: Self.event(.created, eventSource: "news"), devices: [Self.device(.apns)])
        let apns = try #require(try JSONSerialization.jsonObject(with: Data(jobs[0].payload.utf8)) as? [String: Any])
        #expect((apns["aps"] as? [String: Any])?["badge"] == nil)
    }

    @Test("jobs go out per provider, at most jobsPerMessage to a message, in the wire format, and read back unchanged")
    func messagesPerProvider() throws {
        let devices = (0..<5).map { _ in Self.device(.apns) } + [Self.device(.webpush)]
        let jobs = PushJobBuilder.jobs(for: Self.event(.created), devices: devices)
        var messages = PushJobMessages(jobsPerMessage: 2)
        messages.add(jobs)
        let published = messages.finish()
        #expect(published.map(\.routingKey) == ["apns", "apns", "apns", "webpush"])
        #expect(published.allSatisfy { $0.exchange == QueueNames.pushExchange && $0.properties.contentType == WireFormat.contentType })
        let read = try published.flatMap { try PushJobBatch(body: $0.body, contentType: $0.properties.contentType).jobs }
        #expect(Set(read.map(\.pushId)) == Set(jobs.map(\.pushId)))
        #expect(read.sorted { $0.pushId.uuidString < $1.pushId.uuidString } == jobs.sorted { $0.pushId.uuidString < $1.pushId.uuidString })
    }
}
