import Foundation
import NotifyModels
import NotifyStore
import Testing

/// A device to register as a member of an event source: its user, platform and push token.
struct MemberDevice: Sendable {
    var userId: String
    var platform: Platform = .apns
    var pushToken: String
}

extension TestApp {
    /// Defines the open event source `name` and registers each device in it through the API, returning once storage
    /// counts them all as members (registrations answered 202 are applied shortly after).
    func openEventSource(_ name: String, members: [MemberDevice]) async throws {
        let defined = try await appServer(.POST, "/event-sources", json: StackClient.encode(EventSourceRequest(name: name, policy: .open)))
        #expect(defined.status == 201, "\(defined.text)")
        for member in members {
            let answer = try await registerDevice(
                SubscriptionRequest(platform: member.platform, pushToken: member.pushToken, displayName: "e2e member", eventSources: [name]),
                token: try await userToken(member.userId))
            #expect(answer.status == 201 || answer.status == 202, "\(answer.text)")
        }
        try await Database.withClient { client in
            let devices = PostgresDeviceStore(client: client, logger: testLogger)
            _ = try await Database.waitFor("the source's member count") {
                try await devices.eventSources(appId: appId, named: name).first?.memberDevices ?? 0
            } until: { $0 == members.count }
        }
    }
}
