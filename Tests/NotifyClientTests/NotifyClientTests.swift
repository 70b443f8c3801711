import Foundation
import NotifyAPNsCore
import NotifyClient
import NotifyModels
import Testing

/// The client library against the running stack (deploy/local/services.sh): real ingest, storage, fanout.
@Suite("NotifyClient against the running stack", .serialized, .timeLimit(.minutes(1)), .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs the running stack: run deploy/local/test.sh"))
struct NotifyClientTests {
    @Test("a dismiss on one device reaches the other device's live stream, and the first device's sync")
    func dismissReachesOtherDevice() async throws {
        let app = try await Stack.createApp()
        let a = try makeClient(app, userId: "alice", storage: temporaryStorage())
        let b = try makeClient(app, userId: "alice", storage: temporaryStorage())
        try await a.subscribe(pushToken: randomPushToken(), displayName: "phone")
        try await b.subscribe(pushToken: randomPushToken(), displayName: "tablet")
        let id = try await Stack.publish(app, to: "alice", title: "Your order shipped")
        for client in [a, b] {
            _ = try await eventually("the notification on each device") { () async throws -> Bool? in
                try await client.sync()
                return await client.notification(id: id) != nil ? true : nil
            }
        }

        let observed = b.changes
        await b.startLiveUpdates()
        defer { Task { await b.stopLiveUpdates() } }
        try await a.setState(of: id, userActionState: .dismissed)
        #expect(await a.pendingChangeCount == 0)
        #expect(await a.notification(id: id)?.userActionState == .dismissed)

        let seen = await first(of: observed) { $0.notification.id == id && $0.kind == .stateChanged }
        #expect(seen?.notification.userActionState == .dismissed)
        #expect(await b.notification(id: id)?.userActionState == .dismissed)

        let own = try await eventually("the dismiss in A's own sync") { () async throws -> NotificationChange? in
            try await a.sync().first { $0.notification.id == id && $0.kind == .stateChanged }
        }
        #expect(own.notification.userActionState == .dismissed)
        #expect(own.sequence == seen?.sequence)
        #expect(await a.readBatch(filter: NotificationFilter(userActionState: .dismissed)).map(\.id) == [id])
    }

    @Test("a device joins an open event source and leaves it, an appServer one is refused 403, and a new token keeps its sources")
    func eventSources() async throws {
        let app = try await Stack.createApp()
        try await Stack.defineEventSource(app, "breaking-news", policy: "open")
        try await Stack.defineEventSource(app, "account-alerts", policy: "appServer")
        let client = try makeClient(app, userId: "hana", storage: temporaryStorage())
        let first = try await client.subscribe(pushToken: randomPushToken(), displayName: "phone")
        #expect(try await client.isSubscribed(to: "breaking-news") == false)
        try await client.subscribe(to: "breaking-news")
        #expect(try await client.isSubscribed(to: "breaking-news"))
        do {
            try await client.subscribe(to: "account-alerts")
            Issue.record("joining an appServer source should be refused")
        } catch let error as NotifyClientError {
            #expect(error.statusCode == 403)
        }
        let renewed = try await client.subscribe(pushToken: randomPushToken(), displayName: "phone")
        #expect(renewed.id != first.id)
        #expect(try await client.isSubscribed(to: "breaking-news"), "the new token kept the source")
        try await client.unsubscribe(from: "breaking-news")
        #expect(try await client.isSubscribed(to: "breaking-news") == false)
    }

    @Test("a broadcast's push syncs it into the cache; read on one device, it turns read on the other; neither lists it twice")
    func broadcastInFeed() async throws {
        let app = try await Stack.createApp()
        try await Stack.defineEventSource(app, "breaking-news", policy: "open")
        let phone = try makeClient(app, userId: "ines", storage: temporaryStorage())
        let tablet = try makeClient(app, userId: "ines", storage: temporaryStorage())
        for client in [phone, tablet] {
            try await client.subscribe(pushToken: randomPushToken(), displayName: "device")
            try await client.subscribe(to: "breaking-news")
        }
        let id = try await Stack.broadcast(app, to: "breaking-news", title: "Extra")
        _ = try await eventually("the broadcast stored") { try await Stack.notification(app, id) }

        // What APNs delivers for a broadcast: the marker with sequence 0 (broadcasts are numbered apart from the user's changes).
        let payload = APNsPayloadBuilder.payload(for: nil, marker: .init(notificationId: id, sequence: 0, kind: .created), badge: nil)
        let userInfo = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [AnyHashable: Any])
        for client in [phone, tablet] {
            guard case .processed(let changes) = try await client.processPushNotification(userInfo) else {
                Issue.record("the broadcast's push was not processed")
                return
            }
            #expect(changes.map(\.notification.id) == [id])
            #expect(await client.notification(id: id)?.eventSource == "breaking-news")
        }
        #expect(try await phone.sync().isEmpty, "the broadcast was listed again")

        try await phone.setState(of: id, readState: .read)
        let read = try await eventually("the read on the tablet") { () async throws -> NotificationChange? in
            try await tablet.sync().first { $0.notification.id == id && $0.kind == .stateChanged }
        }
        #expect(read.notification.readState == .read)
        #expect(await tablet.notification(id: id)?.readState == .read)
        #expect(try await tablet.sync().isEmpty)
    }

    @Test("the cache and cursor survive re-creating the client from the same storage")
    func cacheSurvivesRelaunch() async throws {
        let app = try await Stack.createApp()
        let storage = temporaryStorage()
        let first = [try await Stack.publish(app, to: "bob", title: "one"), try await Stack.publish(app, to: "bob", title: "two")]
        do {
            let client = try makeClient(app, userId: "bob", storage: storage)
            _ = try await eventually("both notifications synced") { () async throws -> Bool? in
                try await client.sync()
                return await client.readBatch().count == 2 ? true : nil
            }
        }

        let counter = TokenCounter()
        let relaunched = try makeClient(app, userId: "bob", storage: storage, counter: counter)
        let cached = await relaunched.readBatch()
        #expect(Set(cached.map(\.id)) == Set(first))
        #expect(cached.first?.id == first[1], "newest first")
        #expect(counter.calls == 0, "read from the cache, no network call")

        let third = try await Stack.publish(app, to: "bob", title: "three")
        var synced: [NotificationChange] = []
        _ = try await eventually("the new notification synced") { () async throws -> Bool? in
            synced += try await relaunched.sync()
            return synced.contains { $0.notification.id == third } ? true : nil
        }
        #expect(synced.map(\.notification.id) == [third])
        #expect(synced.map(\.kind) == [.created])
        #expect(await relaunched.readBatch().count == 3)
    }

    @Test("a notification whose displayTimeToLive passed is listed for removal from the notification centre, and stays cached")
    func displayTimeToLivePasses() async throws {
        let app = try await Stack.createApp()
        let brief = try await Stack.publish(app, to: "dana", title: "brief", displayTimeToLive: 60)
        let lasting = try await Stack.publish(app, to: "dana", title: "lasting")
        let client = try makeClient(app, userId: "dana", storage: temporaryStorage())
        _ = try await eventually("both synced") { () async throws -> Bool? in
            try await client.sync()
            return await client.readBatch().count == 2 ? true : nil
        }
        let shown = try #require(await client.notification(id: brief))
        let end = try #require(shown.displayExpiresAt)
        #expect(await client.notificationsPastDisplayTime(at: end.addingTimeInterval(-1)).isEmpty)
        #expect(await client.notificationsPastDisplayTime(at: end).map(\.id) == [brief], "the other has no display time: \(lasting)")
        #expect(await client.readBatch().count == 2, "still cached")
    }

    @Test("a push that never arrived is caught up when the next one is processed")
    func missedPushIsCaughtUp() async throws {
        let app = try await Stack.createApp()
        let client = try makeClient(app, userId: "carol", storage: temporaryStorage())
        var ids: [UUID] = []
        for title in ["first", "second", "third"] { ids.append(try await Stack.publish(app, to: "carol", title: title)) }
        var views: [NotificationView] = []
        for id in ids {
            views.append(try await eventually("notification stored") { try await Stack.notification(app, id) })
        }

        // Exactly what APNs delivers for the last notification (built by the service's own payload builder).
        let last = views[2]
        let payload = APNsPayloadBuilder.payload(
            for: nil, marker: .init(notificationId: last.id, sequence: last.sequence, kind: .created), badge: 3)
        let userInfo = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [AnyHashable: Any])

        let result = try await client.processPushNotification(userInfo)
        guard case .processed(let changes) = result else {
            Issue.record("the service's push was not recognised: \(result)")
            return
        }
        #expect(changes.filter { $0.kind == .created }.map(\.notification.id) == ids)
        #expect(Set(await client.readBatch().map(\.id)) == Set(ids))
        #expect(try await client.processPushNotification(userInfo) == .processed([]), "an already synced push changes nothing")
    }

    @Test("an expired token is refreshed once through the provider")
    func expiredTokenIsRefreshedOnce() async throws {
        let app = try await Stack.createApp()
        let counter = TokenCounter()
        let client = try NotifyClient(
            configuration: .init(baseURL: Stack.ingestURL, appId: app.appId, storageDirectory: temporaryStorage()),
            tokenProvider: { try await counter.next { call in try await Stack.userToken(app, "dave", lifetime: call == 1 ? -600 : 3600) } })
        let subscription = try await client.subscribe(pushToken: randomPushToken())
        #expect(counter.calls == 2)
        #expect(subscription.expirationDateTime > Date().addingTimeInterval(86_400))
        try await client.sync()
        #expect(counter.calls == 2, "the fresh token is reused")
    }

    @Test("a dismiss made offline is sent once when the network is back")
    func offlineDismissIsSentOnce() async throws {
        let app = try await Stack.createApp()
        let storage = temporaryStorage()
        let id = try await Stack.publish(app, to: "erin", title: "read me later")
        do {
            let online = try makeClient(app, userId: "erin", storage: storage)
            try await online.subscribe(pushToken: randomPushToken())
            _ = try await eventually("the notification synced") { () async throws -> Bool? in
                try await online.sync()
                return await online.notification(id: id) != nil ? true : nil
            }
        }

        do {
            let offline = try makeClient(app, userId: "erin", storage: storage, baseURL: Stack.deadURL)
            try await offline.setState(of: id, userActionState: .dismissed)
            #expect(await offline.pendingChangeCount == 1)
            #expect(await offline.notification(id: id)?.userActionState == .dismissed)
            let error = await #expect(throws: NotifyClientError.self) { try await offline.flushPendingChanges() }
            #expect(error?.code == .network)
            #expect(await offline.pendingChangeCount == 1)
        }
        #expect(try await Stack.notification(app, id)?.userActionState == .noInteraction)

        let back = try makeClient(app, userId: "erin", storage: storage)
        #expect(await back.pendingChangeCount == 1, "the outbox survived the relaunch")
        try await back.flushPendingChanges()
        try await back.flushPendingChanges()
        #expect(await back.pendingChangeCount == 0)
        _ = try await eventually("the server shows the dismiss") { () async throws -> Bool? in
            try await Stack.notification(app, id)?.userActionState == .dismissed ? true : nil
        }
        let synced = try await back.sync()
        #expect(synced.map(\.kind) == [.stateChanged])
        let stateChanges = try await Stack.allChanges(app, userId: "erin").filter { $0.notification.id == id && $0.kind == .stateChanged }
        #expect(stateChanges.count == 1)
    }

    @Test("what each provider hands the app (APNs userInfo, FCM's data map, the Web Push JSON, a WNS toast's launch arguments), with a deep link and app data, is recognised and synced")
    func everyProvidersPushIsProcessed() async throws {
        let app = try await Stack.createApp()
        let id = try await Stack.publish(app, to: "gus", title: "One for each")
        let view = try await eventually("notification stored") { try await Stack.notification(app, id) }
        let marker = PushMarker(notificationId: view.id, sequence: view.sequence, kind: .created)
        // With a deep link and app data under the names of notify's own options and marker, which each provider keeps apart from it.
        let content = NotificationContent(
            appNotificationId: nil, groupName: nil, priority: view.priority, expirationDateTime: view.expirationDateTime, displayTimeToLive: nil,
            platformTypes: nil, payload: try #require(view.payload),
            push: (view.push ?? PushOptions()).overridden(by: PushOptions(
                url: "https://example.com/orders?id=42&tab=a",
                data: ["title": .string("y"), "category": .string("x"), "notify": .object(["id": .string("not an id")]), "notifyId": .string("x")])))
        func object(_ bytes: [UInt8]) throws -> [AnyHashable: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [AnyHashable: Any])
        }
        let toast = String(decoding: ProviderPayloads.wnsToast(for: content, marker: marker), as: UTF8.self)
        let launch = try #require(toast.split(separator: "\"").dropFirst().first.map(String.init), "no launch attribute in \(toast)")
        let pushes: [(String, [AnyHashable: Any])] = [
            ("APNs", try object(APNsPayloadBuilder.payload(for: content, marker: marker, badge: 1))),
            ("FCM", try #require(try object(ProviderPayloads.fcmMessage(
                for: content, marker: marker, badge: 1, collapseKey: "c", highPriority: true, ttlSeconds: 60))["data"] as? [AnyHashable: Any])),
            ("Web Push", try object(ProviderPayloads.data(for: content, marker: marker, badge: 1))),
            ("WNS", ["launch": launch.replacingOccurrences(of: "&amp;", with: "&")]),
        ]
        for (provider, userInfo) in pushes {
            let client = try makeClient(app, userId: "gus", storage: temporaryStorage())
            guard case .processed(let changes) = try await client.processPushNotification(userInfo) else {
                Issue.record("\(provider)'s push was not recognised: \(userInfo)")
                continue
            }
            #expect(changes.map(\.notification.id) == [id], "\(provider)")
        }
    }

    @Test("a push of another service is not ours, and needs no network")
    func foreignPushIsNotOurs() async throws {
        let app = try await Stack.createApp()
        let counter = TokenCounter()
        let client = try makeClient(app, userId: "frank", storage: temporaryStorage(), counter: counter)
        #expect(try await client.processPushNotification(["aps": ["alert": "hi"]]) == .notOurs)
        #expect(try await client.processPushNotification(["aps": ["content-available": 1], "notify": ["seq": 4]]) == .notOurs)
        #expect(counter.calls == 0)
    }

    @Test("the live stream delivers a notification published while it is open")
    func liveStreamDeliversNewNotification() async throws {
        let app = try await Stack.createApp()
        let client = try makeClient(app, userId: "gina", storage: temporaryStorage())
        let observed = client.changes
        await client.startLiveUpdates()
        defer { Task { await client.stopLiveUpdates() } }
        try await Task.sleep(for: .seconds(1))  // past the initial sync: the stream is what delivers
        let id = try await Stack.publish(app, to: "gina", title: "live")
        let seen = await first(of: observed) { $0.notification.id == id }
        #expect(seen?.kind == .created)
        #expect(await client.readBatch().map(\.id) == [id])
    }

    @Test("re-subscribing keeps the id for the same token and replaces the subscription for a new one")
    func resubscribe() async throws {
        let app = try await Stack.createApp()
        let storage = temporaryStorage()
        let client = try makeClient(app, userId: "hank", storage: storage)
        let token = randomPushToken()
        let first = try await client.subscribe(pushToken: token, displayName: "phone")
        let again = try await client.subscribe(pushToken: token, displayName: "phone")
        #expect(again.id == first.id)
        let rotated = try await client.subscribe(pushToken: randomPushToken(), displayName: "phone")
        #expect(rotated.id != first.id)
        let stored = await (try makeClient(app, userId: "hank", storage: storage)).subscription
        #expect(stored?.id == rotated.id && stored?.pushToken == rotated.pushToken, "the cache holds the new subscription")
        #expect(try await client.renewSubscriptionIfNeeded(within: 3600) == false)
        #expect(try await client.renewSubscriptionIfNeeded(within: 400 * 86_400) == true)
        #expect(await client.subscription?.id == rotated.id)
        try await client.unsubscribe()
        #expect(await client.subscription == nil)
    }
}
