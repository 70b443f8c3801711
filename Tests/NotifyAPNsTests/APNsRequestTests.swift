import Foundation
import NIOCore
import NIOHPACK
import NotifyModels
import Testing

@testable import NotifyAPNs
@testable import NotifyAPNsCore

/// How push-dispatch lays out APNs requests, and how a batch of them is answered.
@Suite("APNs requests and batches")
struct APNsRequestTests {
    let endpoint = try! APNsTransportEndpoint(baseURL: "https://localhost:18443")

    func job(_ platform: Platform, isAlert: Bool, priority: NotificationPriority, payload: String) -> PushJob {
        PushJob(
            pushId: UUID(uuidString: "6B0C1D2E-3F40-4152-8364-758697A8B9CA")!, appId: "app", subscriptionId: UUID(),
            platform: platform, deviceToken: String(repeating: "ab", count: 32), notificationId: UUID(), sequence: 7,
            kind: .created, isAlert: isAlert, priority: priority, expiration: Date(timeIntervalSince1970: 1_800_000_000),
            collapseId: "collapse-1", payload: payload)
    }

    @Test("APNs' headers in its order and nothing more, the token and topic shared, each push's path and apns-id not indexed")
    func requestHeaders() throws {
        let builder = APNsRequestBuilder(endpoint: endpoint, token: "TOKEN", topic: "com.example.app")
        let requests = builder.requests(for: [
            job(.apns, isAlert: true, priority: .high, payload: #"{"aps":{"alert":"hi"}}"#),
            job(.apnsVoip, isAlert: true, priority: .low, payload: #"{"aps":{}}"#),
        ])
        try #require(requests.count == 2)
        let alert = requests[0].headers.headers
        #expect(alert.map(\.name) == [
            ":method", ":scheme", ":authority", ":path", "authorization", "apns-topic", "apns-push-type", "apns-priority",
            "apns-expiration", "apns-collapse-id", "apns-id",
        ])
        #expect(alert.first(name: ":authority") == "localhost:18443")
        #expect(alert.first(name: ":path") == "/3/device/" + String(repeating: "ab", count: 32))
        #expect(alert.first(name: "authorization") == "bearer TOKEN")
        #expect(alert.first(name: "apns-topic") == "com.example.app")
        #expect(alert.first(name: "apns-push-type") == "alert")
        #expect(alert.first(name: "apns-priority") == "10")
        #expect(alert.first(name: "apns-expiration") == "1800000000")
        #expect(alert.first(name: "apns-id") == "6b0c1d2e-3f40-4152-8364-758697a8b9ca")
        let unindexed = alert.filter { $0.indexable == .nonIndexable }.map(\.name)
        #expect(unindexed == [":path", "apns-id"])

        let voip = requests[1].headers.headers
        #expect(voip.first(name: "apns-topic") == "com.example.app.voip")
        #expect(voip.first(name: "apns-push-type") == "voip")
        #expect(voip.first(name: "apns-priority") == "5")

        #expect(String(buffer: requests[0].body) == #"{"aps":{"alert":"hi"}}"#)
        #expect(String(buffer: requests[1].body) == #"{"aps":{}}"#)
    }

    @Test("a background push goes at priority 5 whatever the publisher asked")
    func backgroundPriority() {
        let builder = APNsRequestBuilder(endpoint: endpoint, token: "TOKEN", topic: "com.example.app")
        let headers = builder.requests(for: [job(.apns, isAlert: false, priority: .high, payload: "{}")])[0].headers.headers
        #expect(headers.first(name: "apns-push-type") == "background")
        #expect(headers.first(name: "apns-priority") == "5")
    }

    @Test("a batch resumes once, when its last request is answered, with the answers in request order")
    func batchAnswersInOrder() async {
        let answers = await withCheckedContinuation { continuation in
            let batch = APNsRequestBatch(count: 3, started: .now(), timeout: .seconds(10), continuation: continuation)
            batch.answer(2, with: .failure(.timedOut))
            batch.answer(0, with: .success(APNsTransportResponse(status: 200)))
            batch.answer(1, with: .success(APNsTransportResponse(status: 410, body: ByteBuffer(string: #"{"reason":"Unregistered"}"#))))
        }
        #expect(answers.count == 3)
        #expect(answers.map { (try? $0.result.get())?.status } == [200, 410, nil])
    }
}
