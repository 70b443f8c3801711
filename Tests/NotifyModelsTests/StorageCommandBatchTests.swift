import Foundation
import NotifyModels
import Testing

@Suite("storage command messages")
struct StorageCommandBatchTests {
    @Test("commands are framed in order, at most 500 to a message, and decode back unchanged")
    func commandsAreFramedInOrder() throws {
        let commands = (0..<1201).map { index in
            StorageCommand(
                issuedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)),
                action: .unregisterSubscription(appId: "app", userId: "user-\(index)", subscriptionId: UUID()))
        }
        let bodies = try StorageCommandBatch.bodies(for: commands)
        let decoded = try bodies.map { try WireCoding.makeDecoder().decode(StorageCommandBatch.self, from: $0).commands }
        #expect(decoded.map(\.count) == [500, 500, 201])
        #expect(decoded.flatMap { $0 } == commands)
        #expect(try StorageCommandBatch.bodies(for: []).isEmpty)
    }

    @Test("a batch written directly decodes (with JSONDecoder) to the same commands, for every kind of command")
    func writtenBatchDecodesToTheSameCommands() throws {
        let batch = Self.everyKindOfCommand()
        let written = try WireCoding.makeDecoder().decode(StorageCommandBatch.self, from: batch.encodedJSON())
        #expect(written == batch)
    }

    @Test("the hand-written reader reads every kind of command as JSONDecoder does, written by hand or by JSONEncoder, keys in any order")
    func readerReadsWhatJSONDecoderReads() throws {
        let batch = Self.everyKindOfCommand()
        for json in [try batch.encodedJSON(), try WireCoding.makeEncoder().encode(batch)] {
            #expect(try StorageCommandBatch(decodingJSON: json) == batch)
        }
        let id = UUID()
        let reordered = """
            {"commands":[{"action":{"notification":{"receivedAt":"2027-01-15T08:00:00.125Z","content":{"payload":{},"priority":"high",
            "expirationDateTime":"2027-01-16T08:00:00Z"},"notificationId":"\(id)","userId":"u","appId":"a","extra":[1,{"x":null}]},
            "type":"publishNotification"},"issuedAt":"2027-01-15T08:00:00Z","commandId":"\(id)"}]}
            """
        let decoded = try StorageCommandBatch(decodingJSON: Data(reordered.utf8))
        #expect(decoded == (try WireCoding.makeDecoder().decode(StorageCommandBatch.self, from: Data(reordered.utf8))))
        #expect(decoded.commands.first?.commandId == id)
    }

    @Test("every prefix of a batch, and 5,000 batches with bytes changed, inserted or removed, are read as JSONDecoder reads them")
    func damagedBatches() throws {
        let json = [UInt8](try Self.everyKindOfCommand().encodedJSON())
        let decoder = WireCoding.makeDecoder()
        func sameOutcome(_ bytes: [UInt8]) -> Bool {
            (try? decoder.decode(StorageCommandBatch.self, from: Data(bytes))) == (try? StorageCommandBatch(decodingJSON: bytes))
        }
        for length in stride(from: 0, to: json.count, by: 3) { #expect(sameOutcome(Array(json[..<length])), "the first \(length) bytes") }
        var random = SeededRandom(seed: 11)
        for _ in 0..<5_000 {
            let bytes = random.damaged(json)
            #expect(sameOutcome(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// Publishes with full and plain contents, a broadcast, and the other kinds of command.
    private static func everyKindOfCommand() -> StorageCommandBatch {
        let at = Date(timeIntervalSince1970: 1_800_000_000.125)
        let content = NotificationContent(
            appNotificationId: "order-\"7\"", groupName: "g", priority: .low, expirationDateTime: at.addingTimeInterval(3600),
            displayTimeToLive: 60, platformTypes: [.apns, .fcm],
            payload: NotificationPayload(rawContent: "raw\n✓", visualContent: VisualContent(title: "Tïtle \\", body: nil)),
            push: PushOptions(sound: "ding", category: nil, threadId: "t", data: ["n": .number(1.5), "list": .array([.bool(true), .null]), "s": .string("é")]))
        let plain = NotificationContent(
            appNotificationId: nil, groupName: nil, priority: .high, expirationDateTime: at, displayTimeToLive: nil, platformTypes: nil,
            payload: NotificationPayload(visualContent: VisualContent(title: "t", body: "b")), push: nil)
        let actions: [StorageCommand.Action] = [
            .publishNotification(PublishedNotification(appId: "app", userId: "ü", notificationId: UUID(), content: content, receivedAt: at)),
            .publishNotification(PublishedNotification(appId: "app", userId: "u", notificationId: UUID(), content: plain, receivedAt: at)),
            .publishBroadcast(PublishedBroadcast(appId: "app", eventSource: "news", notificationId: UUID(), content: plain, receivedAt: at)),
            .changeNotificationState(NotificationStateChange(
                appId: "app", userId: "u", notificationId: UUID(), readState: .read, userActionState: nil, delete: false,
                originSubscriptionId: UUID(), requestedAt: at)),
            .unregisterSubscription(appId: "app", userId: "u", subscriptionId: UUID()),
            .expireDueNotifications(dueBy: at),
        ]
        return StorageCommandBatch(commands: actions.map { StorageCommand(issuedAt: at, action: $0) })
    }

    @Test("change events written as an outbox's comma-separated objects frame into a batch JSONDecoder reads back")
    func outboxObjectsFrameIntoABatch() throws {
        let events = (0..<3).map { index in
            ChangeEvent(
                appId: "app", userId: "u\(index)", sequence: Int64(index), kind: index == 0 ? .created : .stateChanged, notificationId: UUID(),
                content: nil, readState: .read, userActionState: .dismissed, originSubscriptionId: index == 2 ? UUID() : nil,
                unreadCount: index, changedAt: Date(timeIntervalSince1970: 1_800_000_000.5))
        }
        let framed = Data("{\"events\":[\(events.encodedJSONObjects())]}".utf8)
        #expect(try WireCoding.makeDecoder().decode(ChangeEventBatch.self, from: framed).events == events)
    }
}
