import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    /// Ids are answered in lowercase (RFC 9562's form), as pushes and the live stream carry them, and read in either case.
    @Suite("ids in one case")
    struct IdentifierCaseTests {
        @Test("publish, registration, history and the delivery log answer lowercase ids; an uppercase id in a path is read")
        func idsAreLowercase() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let device = try await app.registerSubscribedDevice(of: userId)
            #expect(device.subscriptionId == device.subscriptionId.lowercased(), "subscriptionId \(device.subscriptionId)")
            let id = try await app.publishAccepted(.alert(to: userId))
            #expect(id == id.lowercased(), "the publish answer's id \(id)")

            let user = try await app.user(userId)
            _ = try await user.waitForChanges(after: nil) { !$0.isEmpty }
            let history = try await user.history()
            #expect(history.notifications.map(\.id.lowercasedString) == [id])
            // As written on the wire, not only as a UUID reads it back.
            let page = try await user.changesAnswer()
            #expect(page.text.contains("\"id\":\"\(id)\""), "the changes page's ids: \(page.text)")
            #expect(!page.text.contains(id.uppercased()), "an id in uppercase: \(page.text)")
            let raw = try await user.notification(id.uppercased())
            #expect(raw.status == 200, "GET with the id in uppercase answered \(raw.status)")
            #expect(raw.text.contains("\"id\":\"\(id)\""), "the notification's id as written: \(raw.text)")

            try await user.patchAccepted(id.uppercased(), StateChangeRequest(readState: .read))
            let changes = try await user.waitForChanges(after: nil) { $0.contains { $0.kind == .stateChanged } }
            #expect(changes.allSatisfy { $0.notification.id.lowercasedString == id })
        }
    }
}
