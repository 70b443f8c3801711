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

    @Test("a push with a deep link is still ours: notify.url (APNs), notifyUrl (FCM), a url argument after the marker's in a WNS toast's launch")
    func markerBesideADeepLink() {
        let id = "3f2c1a9e-6b1d-4c2e-9a7f-0d5e8b4c2a11"
        #expect(PushMarker(userInfo: ["aps": [:], "notify": ["id": id, "seq": 4, "kind": "created", "url": "myapp://orders/42"]])?.sequence == 4)
        #expect(PushMarker(userInfo: ["notifyId": id, "notifySeq": "5", "notifyKind": "created", "notifyUrl": "https://example.com/o/42"])?.sequence == 5)
        let launch = "notifyId=\(id)&notifySeq=6&url=https%3A%2F%2Fexample.com%2Fo%3Fa%3D1%26b%3D2"
        #expect(PushMarker(userInfo: ["launch": launch])?.sequence == 6)
    }
}
