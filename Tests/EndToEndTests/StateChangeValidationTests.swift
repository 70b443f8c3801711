import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("validating state changes and sync requests")
    struct StateChangeValidationTests {
        private struct RawState: Encodable {
            var readState: String
        }

        private struct Empty: Encodable {}

        @Test("invalid PATCH bodies and change queries answer 400 naming the field, and change nothing")
        func invalidRequestsAreRejected() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let user = try await app.user(userId)
            let id = try await app.publishAccepted(.alert(to: userId))
            _ = try await user.waitForChanges(after: nil) { !$0.isEmpty }

            expectAPIError(try await user.patch(id, Empty()), status: 400, field: "readState", "PATCH {}")
            expectAPIError(try await user.patch(id, RawState(readState: "maybe")), status: 400, field: "readState", "PATCH {\"readState\":\"maybe\"}")
            expectAPIError(try await app.appServer(.PATCH, "/notifications/\(id)", json: StackClient.encode(Empty())), status: 400, field: "readState", "the app server's PATCH {}")
            expectAPIError(try await user.patch("not-a-uuid", StateChangeRequest(readState: .read)), status: 400, field: "id", "PATCH on a malformed id")
            expectAPIError(try await user.patch(UUID().uuidString, StateChangeRequest(readState: .read)), status: 404, field: "id", "PATCH on an unknown id")
            expectAPIError(
                try await user.patch(id, StateChangeRequest(readState: .read), from: "not-a-uuid"), status: 400, field: "X-Subscription-Id",
                "PATCH with a malformed X-Subscription-Id")

            expectAPIError(try await user.changesAnswer(query: "cursor=garbage"), status: 400, field: "cursor", "changes?cursor=garbage")
            expectAPIError(try await user.changesAnswer(query: "limit=0"), status: 400, field: "limit", "changes?limit=0")
            expectAPIError(try await user.changesAnswer(query: "limit=abc"), status: 400, field: "limit", "changes?limit=abc")
            expectAPIError(try await user.changesAnswer(query: "readState=maybe"), status: 400, field: "readState", "changes?readState=maybe")

            let unauthenticated = try await StackClient.send(.GET, "\(Stack.ingestURL)/v1/me/notifications/changes")
            expectAPIError(unauthenticated, status: 401, field: "Authorization", "changes without a user token")

            // None of it changed the notification.
            let changes = try await user.allChanges(after: nil).changes
            #expect(changes.map(\.kind) == [.created], "rejected requests made changes: \(describe(changes))")
            #expect(changes.first?.notification.readState == .unread)
        }
    }
}
