import Foundation
import NotifyAMQP
import NotifyModels
import Testing

@testable import NotifyWire

@Suite struct WireMessageTests {
    @Test func everyStorageCommandRoundTrips() throws {
        let batch = StorageCommandBatch(commands: WireFixtures.commands)
        #expect(try StorageCommandBatch(wireBytes: batch.wireBytes()) == batch)
    }

    @Test("a sender's request for an announcement travels in the wire form and makes storage announce any action")
    func announcementRequestRoundTrips() throws {
        var command = WireFixtures.commands.first { if case .publishNotification = $0.action { true } else { false } }!
        #expect(!command.isAnnouncedWhenApplied)
        command.announceWhenApplied = true
        #expect(command.isAnnouncedWhenApplied)
        let read = try StorageCommandBatch(wireBytes: StorageCommandBatch(commands: [command]).wireBytes()).commands
        #expect(read == [command])
    }

    @Test("a polled publish's origin (source, appNotificationId, digest) travels in the wire form; others carry none")
    func polledItemRoundTrips() throws {
        let plain = WireFixtures.commands.first { if case .publishNotification = $0.action { true } else { false } }!
        var polled = plain
        polled.polledItem = PolledItem(source: "feed", appNotificationId: "a-1", digest: "00ff")
        let read = try StorageCommandBatch(wireBytes: StorageCommandBatch(commands: [plain, polled]).wireBytes()).commands
        #expect(read == [plain, polled])
        #expect(read[0].polledItem == nil)
    }

    @Test("a push's own title and body travel with the other alert options, in the content and in a broadcast member's options")
    func alertTextRoundTrips() throws {
        var content = WireFixtures.fullContent
        content.push = PushOptions(title: "hey user1", subtitle: "from Ana", body: "alert", titleLocKey: "T", interruptionLevel: .active)
        let command = StorageCommand(issuedAt: WireFixtures.time, action: .publishBroadcast(PublishedBroadcast(
            appId: "app", eventSource: "room-7", notificationId: UUID(), content: content, receivedAt: WireFixtures.time,
            recipientPush: ["user1": PushOptions(title: "hey user1"), "user2": PushOptions(body: "alert", delivery: .alert)])))
        #expect(try StorageCommandBatch(wireBytes: StorageCommandBatch(commands: [command]).wireBytes()).commands == [command])
        // Only the text is set: it still travels (in the alert options' message).
        #expect(PushOptions(body: "b").hasAlertOptions && PushOptions(title: "t").wire.hasAlert)
    }

    @Test("a push's deep link and Android channel travel with the alert options, alone too")
    func deepLinkAndChannelRoundTrip() throws {
        var content = WireFixtures.fullContent
        content.push = PushOptions(url: "https://example.com/orders/42", androidChannelId: "orders", data: ["category": .string("x")])
        let command = StorageCommand(issuedAt: WireFixtures.time, action: .publishBroadcast(PublishedBroadcast(
            appId: "app", eventSource: "room-7", notificationId: UUID(), content: content, receivedAt: WireFixtures.time,
            recipientPush: ["user1": PushOptions(url: "myapp://orders/42")])))
        #expect(try StorageCommandBatch(wireBytes: StorageCommandBatch(commands: [command]).wireBytes()).commands == [command])
        #expect(PushOptions(url: "myapp://x").wire.hasAlert && PushOptions(androidChannelId: "c").wire.hasAlert)
    }

    @Test func changeEventsRoundTrip() throws {
        let batch = ChangeEventBatch(events: WireFixtures.events)
        #expect(try ChangeEventBatch(wireBytes: batch.wireBytes()).events == batch.events)
    }

    @Test func pushJobsRoundTripInGroups() throws {
        let batch = PushJobBatch(jobs: WireFixtures.jobs)
        #expect(try PushJobBatch(wireBytes: batch.wireBytes()).jobs == batch.jobs)
        // The payload and shared fields travel once per group: three groups for five jobs.
        let wire = try WirePushJobBatch(serializedBytes: batch.wireBytes())
        #expect(wire.groups.map(\.targets.count) == [2, 2, 1])
    }

    @Test func pushOutcomesRoundTrip() throws {
        let batch = PushOutcomeBatch(outcomes: WireFixtures.outcomes)
        #expect(try PushOutcomeBatch(wireBytes: batch.wireBytes()).outcomes == batch.outcomes)
    }

    @Test func webhookMessagesRoundTrip() throws {
        let time = Date(timeIntervalSince1970: 1_800_000_000.123456)
        let delivery = WebhookDelivery(
            eventId: UUID(), appId: "app", type: "subscription.created", data: Data(#"{"subscriptionId":"x","userId":"u"}"#.utf8), createdAt: time)
        #expect(try WebhookDelivery(wireBytes: delivery.wireBytes()) == delivery)
        let outcomes = WebhookOutcomeBatch(outcomes: [
            WebhookAttempt(eventId: UUID(), appId: "app", type: "eventSource.left", attempt: 2, status: 503, result: "retrying", reason: "HTTP 503", at: time),
            WebhookAttempt(eventId: UUID(), appId: "app", type: "eventSource.left", attempt: 8, status: nil, result: "failed", reason: nil, at: time),
        ])
        #expect(try WebhookOutcomeBatch(wireBytes: outcomes.wireBytes()) == outcomes)
    }

    @Test("ids keep every bit in their fixed64 halves")
    func idHalves() throws {
        for id in [UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFE")!, UUID(uuidString: "00000000-0000-0000-0000-000000000001")!] + (0..<100).map({ _ in UUID() }) {
            let (high, low) = id.wireHalves
            #expect(try UUID(wireHigh: high, low: low, "id") == id)
        }
    }

    @Test func timesKeepTheirMicroseconds() throws {
        let time = Date(timeIntervalSince1970: 1_800_000_000.123456)
        let batch = StorageCommandBatch(commands: [StorageCommand(issuedAt: time, action: .purgeTombstones(olderThan: time))])
        let read = try StorageCommandBatch(wireBytes: batch.wireBytes()).commands[0]
        #expect(read.issuedAt.wireMicros == 1_800_000_000_123_456)
    }

    @Test("the JSON form of schema version 1 is still read, by content type")
    func legacyJSONIsRead() throws {
        let encoder = WireCoding.makeEncoder()
        let commands = StorageCommandBatch(commands: WireFixtures.commands)
        #expect(try StorageCommandBatch(body: encoder.encode(commands), contentType: "application/json") == commands)
        #expect(try StorageCommandBatch(body: encoder.encode(commands), contentType: nil) == commands)
        let events = ChangeEventBatch(events: WireFixtures.events)
        #expect(try ChangeEventBatch(body: encoder.encode(events), contentType: "application/json").events == events.events)
        let jobs = PushJobBatch(jobs: WireFixtures.jobs)
        #expect(try PushJobBatch(body: encoder.encode(jobs), contentType: "application/json").jobs == jobs.jobs)
        let outcomes = PushOutcomeBatch(outcomes: WireFixtures.outcomes)
        #expect(try PushOutcomeBatch(body: encoder.encode(outcomes), contentType: "application/json").outcomes == outcomes.outcomes)
    }

    @Test func protobufIsReadByContentType() throws {
        let batch = PushOutcomeBatch(outcomes: WireFixtures.outcomes)
        #expect(try PushOutcomeBatch(body: batch.wireBytes(), contentType: WireFormat.contentType).outcomes == batch.outcomes)
        #expect(try PushOutcomeBatch(body: batch.wireBytes(), contentType: "application/x-protobuf; proto=notify.wire.PushOutcomeBatch").outcomes == batch.outcomes)
        let error = #expect(throws: WireDecodingError.self) { try PushOutcomeBatch(body: batch.wireBytes(), contentType: "text/plain") }
        #expect(error?.code == .unsupportedContentType)
    }

    @Test func outboundMessagesNameTheirContentType() {
        let message = AMQPOutboundMessage(routingKey: "q", wire: PushOutcomeBatch(outcomes: WireFixtures.outcomes))
        #expect(message.properties.contentType == WireFormat.contentType)
        #expect(message.properties.persistent)
        #expect(StorageCommandBatch.messages(for: Array(repeating: WireFixtures.commands[0], count: 1_001)).map(\.routingKey)
            == Array(repeating: QueueNames.storageCommands, count: 3))
    }

    @Test("outbox fragments joined are one batch of all their events, in order")
    func outboxFragmentsJoin() throws {
        let fragments = [Array(WireFixtures.events.prefix(1)).wireFragment(), Array(WireFixtures.events.dropFirst()).wireFragment()]
        let joined = ChangeEventBatch.wireBytes(joining: fragments)
        #expect(try ChangeEventBatch(wireBytes: joined).events == WireFixtures.events)
        #expect(try WireChangeEventBatch(serializedBytes: joined).schemaVersion == WireFormat.schemaVersion)
    }

    @Test("a newer schema version is refused, an absent one read as this one")
    func schemaVersions() throws {
        var newer = try WirePushOutcomeBatch(serializedBytes: PushOutcomeBatch(outcomes: WireFixtures.outcomes).wireBytes())
        newer.schemaVersion = WireFormat.schemaVersion + 1
        let error = #expect(throws: WireDecodingError.self) { try PushOutcomeBatch(wireBytes: newer.serializedData()) }
        #expect(error?.code == .unsupportedSchemaVersion)
        #expect(error?.description.contains("schema version \(WireFormat.schemaVersion + 1)") == true)
        newer.schemaVersion = 0
        #expect(try PushOutcomeBatch(wireBytes: newer.serializedData()).outcomes == WireFixtures.outcomes)
    }

    @Test("a malformed message is refused naming the field, never with its bytes")
    func malformedMessages() throws {
        let garbage = #expect(throws: WireDecodingError.self) { try ChangeEventBatch(wireBytes: Data([0xFF, 0xFF, 0xFF])) }
        #expect(garbage?.code == .malformed)

        var wire = try WirePushJobBatch(serializedBytes: PushJobBatch(jobs: WireFixtures.jobs).wireBytes())
        (wire.groups[1].targets[0].pushIDHigh, wire.groups[1].targets[0].pushIDLow) = (0, 0)
        let missingId = #expect(throws: WireDecodingError.self) { try PushJobBatch(wireBytes: wire.serializedData()) }
        #expect(missingId?.description == "malformed: PushJobBatch.groups[1].targets[0].push_id is missing")

        var events = try WireChangeEventBatch(serializedBytes: ChangeEventBatch(events: WireFixtures.events).wireBytes())
        events.events[0].notificationID = Data([1, 2, 3])
        let shortId = #expect(throws: WireDecodingError.self) { try ChangeEventBatch(wireBytes: events.serializedData()) }
        #expect(shortId?.description == "malformed: ChangeEventBatch.events[0].notification_id is not 16 bytes")

        var event = try WireChangeEventBatch(serializedBytes: ChangeEventBatch(events: WireFixtures.events).wireBytes())
        event.events[2].kind = .UNRECOGNIZED(99)
        let unknownKind = #expect(throws: WireDecodingError.self) { try ChangeEventBatch(wireBytes: event.serializedData()) }
        #expect(unknownKind?.description == "malformed: ChangeEventBatch.events[2].kind has no value this build knows (99)")

        var command = WireStorageCommandBatch()
        command.commands = [WireStorageCommand()]
        let noAction = #expect(throws: WireDecodingError.self) { try StorageCommandBatch(wireBytes: command.serializedData()) }
        #expect(noAction?.description == "malformed: StorageCommandBatch.commands[0] has no action this build knows")
    }

    @Test("every prefix of a message is refused or read, never a crash")
    func truncatedMessages() throws {
        let bytes = StorageCommandBatch(commands: WireFixtures.commands).wireBytes()
        for length in 0..<bytes.count {
            _ = try? StorageCommandBatch(wireBytes: bytes.prefix(length))
        }
    }
}

@Suite struct PushJobCountTests {
    @Test("jobs are counted from the wire form without decoding, as decoding counts them")
    func countsMatchDecoding() throws {
        for count in [0, 1, 5, 500] {
            let jobs = (0..<count).map { index in WireFixtures.jobs[index % WireFixtures.jobs.count] }
            let bytes = PushJobBatch(jobs: jobs).wireBytes()
            #expect(PushJobBatch.jobCount(wireBytes: bytes) == count)
            #expect(try PushJobBatch(wireBytes: bytes).jobs.count == count)
        }
    }

    @Test("a message that is not protobuf is not counted")
    func garbageIsNotCounted() {
        #expect(PushJobBatch.jobCount(wireBytes: Data(#"{"groups":[]}"#.utf8)) == nil)
        let bytes = PushJobBatch(jobs: WireFixtures.jobs).wireBytes()
        #expect(PushJobBatch.jobCount(wireBytes: bytes.dropLast(3)) == nil)
    }
}
