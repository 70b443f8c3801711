import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("APNs token feedback and retries that survive a crash", .serialized)
    struct ProviderAPNsTests {
        @Test("410 Unregistered with a timestamp older than the registration leaves the subscription; a newer one removes it")
        func unregisteredTimestampRule() async throws {
            let app = try await TestApp.create()
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerSubscribedDevice(of: user)

            // Apple says the token stopped being valid an hour ago: the device registered again since.
            try await ProviderSandbox.fault("apns", token: device.pushToken, status: 410, timestamp: Date().addingTimeInterval(-3600))
            let stale = try await app.publishAccepted(.alert(to: user, title: "stale 410"))
            #expect(try await app.deliveryLog(of: stale) { !$0.isEmpty }.map(\.result) == ["tokenInvalid"])
            #expect(try await Database.subscriptionExists(device.subscriptionId, expecting: false, timeout: .seconds(2)), "removed on a 410 older than the registration")

            try await Task.sleep(for: .milliseconds(100))
            try await ProviderSandbox.fault("apns", token: device.pushToken, status: 410, timestamp: Date())
            let current = try await app.publishAccepted(.alert(to: user, title: "current 410"))
            #expect(try await app.deliveryLog(of: current) { !$0.isEmpty }.map(\.result) == ["tokenInvalid"])
            #expect(try await !Database.subscriptionExists(device.subscriptionId, expecting: false), "not removed on a 410 newer than the registration")
        }

        @Test("push-dispatch SIGKILLed while pushes wait in a delay queue: once started again, they are delivered")
        func retryBacklogSurvivesAKill() async throws {
            try await Services.restoringAll {
                let app = try await TestApp.create()
                try await app.storeFCMCredentials()
                let user = "user-\(uniqueSuffix())"
                let phone = try await app.registerDevice(of: user)
                let android = "e2e:\(randomHex(bytes: 24))"
                _ = try await app.registerDevice(of: user, platform: .fcm, pushToken: android)
                // Retry-After 5 puts both retries in the 5 s delay queue, long enough to kill push-dispatch meanwhile.
                try await ProviderSandbox.fault("apns", token: phone, status: 503, retryAfter: 5)
                try await ProviderSandbox.fault("fcm", token: android, status: 503, reason: "UNAVAILABLE", retryAfter: 5)
                let id = try await app.publishAccepted(.alert(to: user, title: "retried across a crash"))

                let log = try await app.deliveryLog(of: id) { $0.filter { $0.result == "retrying" }.count == 2 }
                try #require(log.filter { $0.result == "retrying" }.count == 2, "the first attempts were not logged as retrying: \(log.map(\.result))")
                try await Services.control("kill", ["push-dispatch"])
                try await Task.sleep(for: .seconds(6))
                try await Services.control("start", ["push-dispatch"])

                #expect(try await Sandbox.missingNotifications([id], at: phone, timeout: .seconds(30)).isEmpty, "the APNs retry was lost")
                #expect(try await ProviderSandbox.waitForDeliveries("fcm", to: android, timeout: .seconds(30)).count == 1, "the FCM retry was lost")
            }
        }
    }
}
