import Foundation
import Logging
import NotifyAMQP
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import NotifyTestSupport
import NotifyWire
import Testing

@testable import FanoutCore

/// Fanout's two lanes in-process, on an audience held in memory and a publisher that records what it is given: which
/// devices each change pushes, where broadcasts go, and when the users' devices are read again.
@Suite struct FanoutHandlerTests {
    private static let appId = "app"
    private static let logger: Logger = {
        var logger = Logger(label: "fanout-tests")
        logger.logLevel = .critical
        return logger
    }()

    private static func device(_ platform: Platform) -> PushDevice {
        PushDevice(
            subscriptionId: UUID(), platform: platform.rawValue, pushToken: "token-\(UUID())",
            keys: platform == .webpush ? #"{"p256dh":"BPk","auth":"a1"}"# : nil, expiresAt: Date().addingTimeInterval(3600))!
    }

    private static func event(for userId: String, devicesVersion: Int64? = nil, eventSource: String? = nil, changedAt: Date = Date()) -> ChangeEvent {
        var event = ChangeEvent(
            appId: appId, userId: eventSource == nil ? userId : "", sequence: 1, kind: .created, notificationId: UUID(),
            content: NotificationContent(
                appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(600), displayTimeToLive: nil,
                platformTypes: nil, payload: NotificationPayload(visualContent: VisualContent(title: "T")), push: nil),
            readState: .unread, userActionState: .noInteraction, originSubscriptionId: nil, badge: 1, changedAt: changedAt, eventSource: eventSource)
        event.devicesVersion = devicesVersion
        return event
    }

    private static func delivery(_ events: [ChangeEvent], tag: UInt64 = 1) -> AMQPDelivery {
        AMQPDelivery(received: AMQPOutboundMessage(routingKey: QueueNames.fanoutChanges, wire: ChangeEventBatch(events: events)), tag: tag)
    }

    /// The devices pushed by what was published, and where the rest went.
    private static func pushed(_ messages: [AMQPOutboundMessage]) throws -> (devices: [UUID], routingKeys: Set<String>, broadcasts: [ChangeEvent]) {
        var devices: [UUID] = []
        var keys: Set<String> = []
        var broadcasts: [ChangeEvent] = []
        for message in messages {
            if message.routingKey == QueueNames.fanoutBroadcasts {
                broadcasts += try ChangeEventBatch(body: message.body, contentType: message.properties.contentType).events
            } else {
                keys.insert(message.routingKey)
                devices += try PushJobBatch(body: message.body, contentType: message.properties.contentType).jobs.map(\.subscriptionId)
            }
        }
        return (devices, keys, broadcasts)
    }

    @Test("one batch pushes every device of each user on its provider's queue, moves broadcasts to their lane, and dead-letters what is not a change batch")
    func changesFanOut() async throws {
        let audiences = MemoryPushAudienceStore()
        let alice = [Self.device(.apns), Self.device(.fcm)]
        let bob = [Self.device(.webpush)]
        audiences.setDevices(alice, of: PushUser(appId: Self.appId, userId: "alice"))
        audiences.setDevices(bob, of: PushUser(appId: Self.appId, userId: "bob"))
        let publisher = RecordingPublisher()
        let handler = ChangeFanoutHandler(
            resolver: SubscriptionResolver(store: audiences, cache: DeviceCache(usersPerGeneration: 100)), publisher: publisher, lanes: FanoutLanes(),
            logger: Self.logger)
        let broadcast = Self.event(for: "", eventSource: "news")
        let garbage = AMQPDelivery(received: AMQPOutboundMessage(routingKey: QueueNames.fanoutChanges, body: Data("not a batch".utf8)), tag: 2)
        let dispositions = await handler.handle(
            [Self.delivery([Self.event(for: "alice"), Self.event(for: "bob"), broadcast]), garbage], order: .first)
        #expect(dispositions.first == .ack)
        guard case .deadLetter = dispositions.last else {
            Issue.record("a message that is not a change batch was not dead-lettered: \(dispositions)")
            return
        }
        #expect(publisher.publishes.count == 1, "the jobs and the broadcast in one confirmed publish")
        let result = try Self.pushed(publisher.all)
        #expect(Set(result.devices) == Set((alice + bob).map(\.subscriptionId)) && result.devices.count == 3)
        #expect(result.routingKeys == Set([Platform.apns, .fcm, .webpush].map { QueueNames.pushRoutingKey($0, lane: .interactive) }))
        #expect(result.broadcasts.map(\.notificationId) == [broadcast.notificationId], "the broadcast goes to its own lane, not pushed here")
    }

    @Test("a user's devices are read once per devices version: a change carrying a newer version reads them again")
    func devicesAreCachedByVersion() async throws {
        let audiences = MemoryPushAudienceStore()
        let user = PushUser(appId: Self.appId, userId: "alice")
        let version = audiences.setDevices([Self.device(.apns)], of: user)
        let publisher = RecordingPublisher()
        let handler = ChangeFanoutHandler(
            resolver: SubscriptionResolver(store: audiences, cache: DeviceCache(usersPerGeneration: 100)), publisher: publisher, lanes: FanoutLanes(),
            logger: Self.logger)
        _ = await handler.handle([Self.delivery([Self.event(for: "alice", devicesVersion: version)])], order: .first)
        _ = await handler.handle([Self.delivery([Self.event(for: "alice", devicesVersion: version)])], order: .first)
        #expect(audiences.deviceReads == 1, "the second change found the devices in the cache")
        let tablet = Self.device(.fcm)
        let newer = audiences.setDevices([Self.device(.apns), tablet], of: user)
        _ = await handler.handle([Self.delivery([Self.event(for: "alice", devicesVersion: newer)])], order: .first)
        #expect(audiences.deviceReads == 2)
        #expect(try Self.pushed(publisher.publishes.last ?? []).devices.contains(tablet.subscriptionId), "the new device is pushed")
    }

    @Test("a broadcast is pushed page by page to the members that joined by its time, on the bulk lane")
    func broadcastsStreamTheirAudience() async throws {
        let audiences = MemoryPushAudienceStore(pageSize: 2)
        let published = Date()
        let members = (0..<5).map { _ in Self.device(.apns) }
        for (index, device) in members.enumerated() {
            audiences.addMember(device, of: PushUser(appId: Self.appId, userId: "user\(index)"), to: "news", joinedAt: published.addingTimeInterval(-60))
        }
        audiences.addMember(Self.device(.apns), of: PushUser(appId: Self.appId, userId: "late"), to: "news", joinedAt: published.addingTimeInterval(60))
        let publisher = RecordingPublisher()
        let handler = BroadcastFanoutHandler(audiences: audiences, publisher: publisher, lanes: FanoutLanes(), logger: Self.logger)
        let dispositions = await handler.handle([Self.delivery([Self.event(for: "", eventSource: "news", changedAt: published)])])
        #expect(dispositions == [.ack])
        #expect(publisher.publishes.count == 3, "one confirmed publish per page of two")
        let result = try Self.pushed(publisher.all)
        #expect(Set(result.devices) == Set(members.map(\.subscriptionId)) && result.devices.count == members.count)
        #expect(result.routingKeys == [QueueNames.pushRoutingKey(.apns, lane: .bulk)])
    }
}
