import Foundation
import NotifyModels
import NotifyStore
import Testing

extension EndToEndTests {
    @Suite("membership parameters")
    struct MembershipParameterTests {
        @Test("parameters set on enrolment are listed with the membership, and a broadcast's where reaches only the members whose parameters match, among 3,000 seeded ones, in their feeds and on their devices")
        func narrowedBroadcast() async throws {
            let app = try await TestApp.create()
            let source = "teams"
            let (red, blue) = ("red-\(uniqueSuffix())", "blue-\(uniqueSuffix())")
            let (redPhone, bluePhone) = (randomHex(bytes: 32), randomHex(bytes: 32))
            try await app.openEventSource(source, members: [MemberDevice(userId: red, pushToken: redPhone), MemberDevice(userId: blue, pushToken: bluePhone)])
            for (user, team) in [(red, "red"), (blue, "blue")] {
                let enrolled = try await app.appServer(
                    .PUT, "/users/\(user)/event-sources/\(source)", json: StackClient.encode(MembershipRequest(parameters: ["team": .string(team), "level": .number(3)])))
                #expect(enrolled.status == 200, "\(enrolled.text)")
                #expect(try enrolled.decode(EventSourceMembership.self).parameters == ["team": .string(team), "level": .number(3)])
            }
            let listed = try await app.appServer(.GET, "/users/\(red)/event-sources/\(source)").decode(EventSourceMembership.self)
            #expect(listed.parameters?["team"] == .string("red"))

            // 3,000 more members, every third one red.
            let seeded = 3000
            let tokens = try await Database.withClient { client in
                try await EventSourceAudience.seed(seeded, userPrefix: "member-", of: source, in: app, on: client) { number in
                    ["team": .string(number % 3 == 0 ? "red" : "blue")]
                }
            }
            let id = try await app.publishAccepted(NotificationRequest(
                eventSource: source, payload: NotificationPayload(visualContent: VisualContent(title: "Red team")), where: ["team": .string("red")]))

            let reds = seeded / 3 + 1
            let accepted = try await Database.inspecting { inspection in
                try await Database.waitFor("the accepted pushes logged", timeout: .seconds(120)) {
                    try await inspection.outcomeCount(appId: app.appId, notificationId: UUID(uuidString: id)!, result: .accepted)
                } until: { $0 >= reds }
            }
            #expect(accepted == reds, "one push per red member, no more")
            #expect(try await Sandbox.missingNotifications([id], at: redPhone).isEmpty)
            #expect(try await Sandbox.missingNotifications([id], at: tokens[2]).isEmpty, "member 3 is red")
            #expect(try await Sandbox.deliveries(to: bluePhone).filter { $0.notificationId == id }.isEmpty, "a blue member was pushed")
            #expect(try await Sandbox.deliveries(to: tokens[0]).isEmpty, "member 1 is blue")

            // In the red member's feed, not in the blue one's.
            let redReader = try await app.user(red), blueReader = try await app.user(blue)
            #expect(try await redReader.history().notifications.contains { $0.id.uuidString.lowercased() == id })
            let blueHistory = try await blueReader.history()
            #expect(!blueHistory.notifications.contains { $0.id.uuidString.lowercased() == id })
        }

        @Test("where is refused but for a broadcast, and with a value that is not a scalar, naming the field; parameters likewise")
        func refusals() async throws {
            let app = try await TestApp.create()
            let toUser = try await app.publish(NotificationRequest(
                userId: "u", payload: NotificationPayload(visualContent: VisualContent(title: "t")), where: ["team": .string("red")]))
            expectAPIError(toUser, status: 400, field: "where", "where with userId")
            let nested = try await app.publish(NotificationRequest(
                eventSource: "teams", payload: NotificationPayload(visualContent: VisualContent(title: "t")), where: ["team": .object(["a": .bool(true)])]))
            expectAPIError(nested, status: 400, field: "where.team", "an object in where")
            try await app.openEventSource("teams", members: [])
            let user = "user-\(uniqueSuffix())"
            _ = try await app.registerDevice(of: user)
            let enrolled = try await app.appServer(
                .PUT, "/users/\(user)/event-sources/teams", json: StackClient.encode(MembershipRequest(parameters: ["tags": .array([.string("a")])])))
            expectAPIError(enrolled, status: 400, field: "parameters.tags", "an array in parameters")
        }
    }
}
