import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("services survive crashes and restarts", .serialized)
    struct RestartTests {
        /// Publishes `count` notifications (retrying while ingest is unavailable or down) and returns the ids that got a 202.
        private func publish(_ count: Int, _ label: String, to user: String, of app: TestApp) async throws -> [String] {
            var ids: [String] = []
            for index in 0..<count {
                ids.append(try await app.publishAccepted(.alert(to: user, title: "\(label) \(index)"), retry: .whileUnavailableOrUnreachable))
            }
            return ids
        }

        @Test("no accepted notification is lost when a service is SIGKILLed and started again", arguments: Services.pipeline)
        func killAndStart(_ service: String) async throws {
            try await Services.restoringAll {
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let device = try await app.registerDevice(of: user)

                var accepted = try await publish(3, "before", to: user, of: app)
                try await Services.control("kill", [service])
                // While it is down: accepted by ingest and queued, or (ingest itself) retried until it is back.
                async let whileDown = publish(3, "while \(service) is down", to: user, of: app)
                try await Task.sleep(for: .milliseconds(500))
                try await Services.control("start", [service])
                accepted += try await whileDown
                accepted += try await publish(3, "after", to: user, of: app)

                let missing = try await Sandbox.missingNotifications(Set(accepted), at: device)
                #expect(missing.isEmpty, "after SIGKILL of \(service): \(missing.count) of \(accepted.count) accepted notifications never reached the device: \(missing.sorted())")
            }
        }

        @Test("after PostgreSQL restarts, a device registers (answered with its stored subscription), its state changes answer with what is stored, and nothing accepted is lost")
        func databaseRestart() async throws {
            try await Services.restoringAll {
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let device = try await app.registerDevice(of: user)
                var accepted = try await publish(2, "before", to: user, of: app)

                let restart = try await Scripts.run("postgres.sh", ["restart"])
                try #require(restart.status == 0, "postgres.sh restart failed: \(restart.output)")
                accepted += try await publish(2, "after", to: user, of: app)

                // Ingest's wait for storage's announcements reconnects by itself; until it does, it polls.
                for attempt in 1...3 {
                    let answer = try await app.registerDevice(
                        SubscriptionRequest(platform: .apns, pushToken: randomHex(bytes: 32), displayName: "after restart \(attempt)"),
                        token: try await app.userToken(user))
                    #expect(answer.status == 201, "registration \(attempt) after the restart answered \(answer.status), not 201 (stored): \(answer.text)")
                }
                let read = try await UserClient(app: app, userId: user).patch(accepted[0], StateChangeRequest(readState: .read))
                #expect(read.status == 200 && read.text.contains("\"readState\":\"read\""), "PATCH after the restart answered \(read.status): \(read.text)")
                let missing = try await Sandbox.missingNotifications(Set(accepted), at: device)
                #expect(missing.isEmpty, "after a PostgreSQL restart: \(missing.count) of \(accepted.count) accepted notifications never reached the device")
            }
        }

        @Test("after a graceful restart of each service in turn, a publish still arrives")
        func gracefulRestarts() async throws {
            try await Services.restoringAll {
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let device = try await app.registerDevice(of: user)

                for service in Services.pipeline {
                    try await Services.control("restart", [service])
                }
                let id = try await app.publishAccepted(.alert(to: user, title: "after the restarts"), retry: .whileUnavailableOrUnreachable)

                #expect(try await Sandbox.missingNotifications([id], at: device).isEmpty, "the notification did not arrive within 20 s of the restarts")
            }
        }
    }
}
