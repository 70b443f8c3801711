import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import IngestCore

/// The backlog check in front of publishing, and the bound on live streams per user.
struct PipelineBacklogTests {
    @Test("publishes are refused while a watched queue is over the limit, and taken again only below 80 % of it; other queues do not count")
    func hysteresis() {
        let backlog = PipelineBacklog(maximumDepth: 100)
        backlog.record(depths: ["storage.commands": 100, "push.apns.dead": 10_000, "some.other": 500])
        #expect(backlog.refusal() == nil)
        backlog.record(depths: ["storage.commands": 10, "push.fcm": 101])
        #expect(backlog.refusal()?.body.error.message.contains("push.fcm holds 101") == true)
        backlog.record(depths: ["push.fcm": 85])
        #expect(backlog.refusal() != nil, "still refused between 80 % and the limit")
        backlog.record(depths: ["push.fcm": 79])
        #expect(backlog.refusal() == nil)
        backlog.record(depths: ["fanout.changes": 150])
        backlog.clear()
        #expect(backlog.refusal() == nil, "cleared when the depths cannot be read")
        let off = PipelineBacklog(maximumDepth: 0)
        off.record(depths: ["storage.commands": 1_000_000])
        #expect(off.refusal() == nil, "0 turns it off")
    }

    @Test("a publish while the pipeline is backlogged is answered 503 pipeline_backlogged with Retry-After before its body is read; nothing is published")
    func backloggedPublishIsRefused() async throws {
        let backlog = PipelineBacklog(maximumDepth: 10)
        backlog.record(depths: ["storage.commands": 11])
        let testing = RouteTesting(backlog: backlog)
        try await testing.run { client in
            let response = try await client.execute(
                uri: "/v1/apps/\(RouteTesting.appId)/notifications", method: .post, headers: [.authorization: "Bearer api-key"],
                body: ByteBuffer(string: #"{"userId":"alice","payload":{"visualContent":{"title":"Hi"}}}"#))
            #expect(response.status == .serviceUnavailable)
            #expect(response.headers[.retryAfter] == "2")
            #expect(String(buffer: response.body).contains("pipeline_backlogged"))
            #expect(testing.published.all.isEmpty)
        }
    }

    @Test("a user holds at most the limit of live streams on an instance; closing one frees its place")
    func streamsPerUser() {
        let hub = LiveHub(maximumStreamsPerUser: 2)
        let first = hub.subscribe(appId: "a", userId: "u")
        #expect(first != nil && hub.subscribe(appId: "a", userId: "u") != nil)
        #expect(hub.subscribe(appId: "a", userId: "u") == nil)
        #expect(hub.subscribe(appId: "a", userId: "other") != nil, "per user")
        if let first { hub.unsubscribe(first.0) }
        #expect(hub.subscribe(appId: "a", userId: "u") != nil)
    }
}
