import Foundation
import NotifyAPNsCore
import NotifyModels
import Testing

@Suite struct WireFormatTests {
    @Test func apnsAlertPayloadCarriesAlertBadgeAndMarker() throws {
        let content = NotificationContent(
            appNotificationId: nil, groupName: "orders", priority: .high, expirationDateTime: Date(), displayTimeToLive: nil,
            platformTypes: nil, payload: NotificationPayload(rawContent: "r", visualContent: VisualContent(title: "T \"q\"", body: "B\n")),
            push: PushOptions(sound: "default", data: ["orderId": .number(42)]))
        let id = UUID()
        let bytes = APNsPayloadBuilder.payload(for: content, marker: .init(notificationId: id, sequence: 7, kind: .created), badge: 3)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let aps = try #require(json["aps"] as? [String: Any])
        let alert = try #require(aps["alert"] as? [String: Any])
        #expect(alert["title"] as? String == "T \"q\"")
        #expect(alert["body"] as? String == "B\n")
        #expect(aps["badge"] as? Int == 3)
        #expect(aps["sound"] as? String == "default")
        #expect(aps["thread-id"] as? String == "orders")
        #expect(aps["content-available"] as? Int == 1, "an alert also wakes the app to sync")
        let marker = try #require(json["notify"] as? [String: Any])
        #expect(marker["id"] as? String == id.uuidString.lowercased())
        #expect(marker["seq"] as? Int == 7)
        #expect((json["data"] as? [String: Any])?["orderId"] as? Int == 42)
        #expect(json["rawContent"] as? String == "r")
    }

    @Test func stateChangesAreBackgroundPushes() throws {
        let bytes = APNsPayloadBuilder.payload(for: nil, marker: .init(notificationId: UUID(), sequence: 9, kind: .deleted), badge: nil)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let aps = try #require(json["aps"] as? [String: Any])
        #expect(aps["content-available"] as? Int == 1)
        #expect(aps["alert"] == nil)
    }

    @Test func deterministicIdsAreStableAndDistinct() {
        let a = DeterministicID.notificationID(appId: "app", userId: "u", appNotificationId: "n")
        #expect(a == DeterministicID.notificationID(appId: "app", userId: "u", appNotificationId: "n"))
        #expect(a != DeterministicID.notificationID(appId: "app", userId: "v", appNotificationId: "n"))
        #expect(a.uuidString.dropFirst(14).first == "5")
    }

    @Test("random UUIDs are version 4, variant 1, and do not repeat")
    func randomUUIDsAreVersion4() {
        let ids = (0..<10_000).map { _ in UUID.random() }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(100) {
            let text = id.uuidString
            #expect(Array(text)[14] == "4", "version nibble of \(text)")
            #expect("89AB".contains(Array(text)[19]), "variant of \(text)")
            #expect(UUID(uuidString: text) == id)
        }
    }

    @Test func storageCommandsRoundTrip() throws {
        let command = StorageCommand(issuedAt: Date(timeIntervalSince1970: 1_800_000_000.25), action: .publishNotification(PublishedNotification(
            appId: "app", userId: "u", notificationId: UUID(),
            content: NotificationContent(
                appNotificationId: "x", groupName: nil, priority: .low, expirationDateTime: Date(timeIntervalSince1970: 1_800_000_000.5),
                displayTimeToLive: 60, platformTypes: [.apns], payload: NotificationPayload(rawContent: "r"), push: nil),
            receivedAt: Date(timeIntervalSince1970: 1_800_000_000))))
        let data = try WireCoding.makeEncoder().encode(command)
        #expect(try WireCoding.makeDecoder().decode(StorageCommand.self, from: data) == command)
    }

    @Test func timestampsAcceptBothISOForms() {
        #expect(WireCoding.parseTimestamp("2026-01-31T12:00:00Z") != nil)
        #expect(WireCoding.parseTimestamp("2026-01-31T12:00:00.250Z") != nil)
        #expect(WireCoding.parseTimestamp("yesterday") == nil)
    }
}
