import Foundation
import Testing

@testable import NotifyClient

/// Recognising this service's pushes in every provider's payload.
@Suite struct PushMarkerTests {
    @Test("the notify dictionary (APNs, Web Push, WNS raw) and FCM's flat data keys are ours; anything else is not")
    func everyProvidersMarker() {
        let id = "3f2c1a9e-6b1d-4c2e-9a7f-0d5e8b4c2a11"
        #expect(PushMarker(userInfo: ["aps": ["content-available": 1], "notify": ["id": id, "seq": 7, "kind": "created"]])?.sequence == 7)
        #expect(PushMarker(userInfo: ["notifyId": id, "notifySeq": "12", "notifyKind": "stateChanged"])?.sequence == 12)
        #expect(PushMarker(userInfo: ["notifyId": id])?.sequence == nil)
        #expect(PushMarker(userInfo: ["notifyId": "not-a-uuid", "notifySeq": "1"]) == nil)
        #expect(PushMarker(userInfo: ["aps": ["alert": "someone else's"]]) == nil)
    }
}
