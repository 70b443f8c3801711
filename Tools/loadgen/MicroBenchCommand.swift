import ArgumentParser
import Crypto
import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NotifyAPNsCore
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyWire
import PostgresNIO

/// `loadgen micro`: the hot functions of the pipeline timed one by one, in this process, nothing else running.
struct MicroBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "micro",
        abstract: "Time the pipeline's hot functions (payloads, push-job, push-outcome and change-event coding, ids, JWTs, loadgen's own publish and delivery reading) in isolation.",
        discussion: """
            Each function runs in rounds of --round calls for --seconds (after a warm-up round); the report gives \
            calls/s and the time per call at p50 and p99 over the rounds. Build with -c release for figures that \
            mean anything.
            """
    )

    @Option(help: "Seconds per function (at most 30).")
    var seconds = 1.0
    @Option(help: "Calls (or batch items) per timed round.")
    var round = 200
    @Option(help: "Directory for report.json and report.md. (default: .local/loadgen/micro-<time>)")
    var output: String?

    func validate() throws {
        guard seconds > 0, seconds <= 30 else { throw ValidationError("--seconds must be more than 0 and at most 30.") }
        guard (1...100_000).contains(round) else { throw ValidationError("--round must be between 1 and 100,000.") }
    }

    func run() async throws {
        let fixture = try await MicroBenchFixture()
        var figures: [BenchmarkReport.Figure] = []
        var sink = 0
        /// Calls `round` once to warm up, then again and again for `seconds`; `calls` is how many items one round
        /// handles. Times and rates are per item.
        func timeRounds(_ name: String, items calls: Int, _ round: () async throws -> Void) async throws {
            try await round()
            var perCallNanoseconds: [Double] = []
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(seconds)
            var total = 0
            let started = clock.now
            while clock.now < deadline {
                let roundStarted = clock.now
                try await round()
                perCallNanoseconds.append(roundStarted.duration(to: clock.now).inSeconds * 1e9 / Double(calls))
                total += calls
            }
            let totalSeconds = started.duration(to: clock.now).inSeconds
            perCallNanoseconds.sort()
            let p50 = perCallNanoseconds[perCallNanoseconds.count / 2]
            let p99 = perCallNanoseconds[min(perCallNanoseconds.count - 1, perCallNanoseconds.count * 99 / 100)]
            figures.append(.init(name: "\(name): calls/s", value: Double(total) / totalSeconds, unit: "/s"))
            figures.append(.init(name: "\(name): time per call p50", value: p50, unit: "ns"))
            figures.append(.init(name: "\(name): time per call p99", value: p99, unit: "ns"))
        }
        /// `unit` is how many items one call handles (jobs of a batch): times and rates are per item.
        func measure(_ name: String, perCall unit: Int = 1, _ body: () throws -> Int) async throws {
            let callsPerRound = max(1, round / unit)
            try await timeRounds(name, items: callsPerRound * unit) { for _ in 0..<callsPerRound { sink &+= try body() } }
        }
        /// The same for a call that is async (jwt-kit signs and verifies through an actor).
        func measureAsync(_ name: String, _ body: () async throws -> Int) async throws {
            try await timeRounds(name, items: round) { for _ in 0..<round { sink &+= try await body() } }
        }

        let batch = fixture.pushJobBatch
        let encoder = WireCoding.makeEncoder()
        let batchJSON = try encoder.encode(batch)
        let batchWire = batch.wireBytes()
        let outcomes = fixture.pushOutcomeBatch
        let outcomesJSON = try encoder.encode(outcomes)
        let outcomesWire = outcomes.wireBytes()
        let changesJSON = try encoder.encode(fixture.changeEventBatch)
        let changesWire = fixture.changeEventBatch.wireBytes()
        let decoder = WireCoding.makeDecoder()
        try await measure("APNs alert payload (APNsPayloadBuilder)") {
            APNsPayloadBuilder.payload(for: fixture.content, marker: fixture.marker, badge: 3).count
        }
        try await measure("FCM message (ProviderPayloads.fcmMessage)") {
            ProviderPayloads.fcmMessage(for: fixture.content, marker: fixture.marker, badge: 3, collapseKey: "c", highPriority: true, ttlSeconds: 3600).count
        }
        try await measure("push id (DeterministicID.pushID)") {
            DeterministicID.pushID(notificationId: fixture.marker.notificationId, sequence: 7, subscriptionId: fixture.subscriptionId).uuid.0 == 0 ? 0 : 1
        }
        try await measure("push-job batch encode, protobuf (per job)", perCall: batch.jobs.count) { batch.wireBytes().count }
        try await measure("push-job batch encode, JSONEncoder (per job)", perCall: batch.jobs.count) { try encoder.encode(batch).count }
        try await measure("push-job batch decode, JSONDecoder (per job)", perCall: batch.jobs.count) {
            try decoder.decode(PushJobBatch.self, from: batchJSON).jobs.count
        }
        try await measure("push-job batch decode, protobuf (per job)", perCall: batch.jobs.count) {
            try PushJobBatch(wireBytes: batchWire).jobs.count
        }
        try await measure("push-outcome batch encode, protobuf (per outcome)", perCall: outcomes.outcomes.count) { outcomes.wireBytes().count }
        try await measure("push-outcome batch encode, JSONEncoder (per outcome)", perCall: outcomes.outcomes.count) { try encoder.encode(outcomes).count }
        try await measure("push-outcome batch decode, JSONDecoder (per outcome)", perCall: outcomes.outcomes.count) {
            try decoder.decode(PushOutcomeBatch.self, from: outcomesJSON).outcomes.count
        }
        try await measure("push-outcome batch decode, protobuf (per outcome)", perCall: outcomes.outcomes.count) {
            try PushOutcomeBatch(wireBytes: outcomesWire).outcomes.count
        }
        try await measure("change-event batch decode, JSONDecoder (per event)", perCall: fixture.changeEventBatch.events.count) {
            try decoder.decode(ChangeEventBatch.self, from: changesJSON).events.count
        }
        try await measure("change-event batch encode, protobuf (per event)", perCall: fixture.changeEventBatch.events.count) {
            fixture.changeEventBatch.wireBytes().count
        }
        try await measure("change-event batch decode, protobuf (per event)", perCall: fixture.changeEventBatch.events.count) {
            try ChangeEventBatch(wireBytes: changesWire).events.count
        }
        // The twelve arrays of a push-outcome batch, as storage binds them to record it (per outcome).
        let outcomeIds = outcomes.outcomes.map(\.pushId)
        let outcomeResults = outcomes.outcomes.map(\.result.rawValue)
        let outcomeTimes = outcomes.outcomes.map(\.at)
        try await measure("push-outcome arrays bound, PostgresNIO [T] (uuid, text, timestamptz; per outcome)", perCall: outcomes.outcomes.count) {
            var buffer = ByteBuffer()
            outcomeIds.encode(into: &buffer, context: .default)
            outcomeResults.encode(into: &buffer, context: .default)
            outcomeTimes.encode(into: &buffer, context: .default)
            return buffer.readableBytes
        }
        try await measure("push-outcome arrays bound, ArrayParameter (uuid, text, timestamptz; per outcome)", perCall: outcomes.outcomes.count) {
            var buffer = ByteBuffer()
            ArrayParameter(outcomeIds).encode(into: &buffer, context: .default)
            ArrayParameter(outcomeResults).encode(into: &buffer, context: .default)
            ArrayParameter(outcomeTimes).encode(into: &buffer, context: .default)
            return buffer.readableBytes
        }
        // A new signer each time, as APNsTokenSigner signs a new token (its cache is what keeps this off the push path).
        try await measureAsync("APNs provider token, ES256 sign (jwt-kit, APNsTokenSigner)") {
            try await APNsTokenSigner().token(teamId: "TEAM123456", keyId: "KEY1234567", privateKeyPEM: fixture.signingKeyPEM).utf8.count
        }
        let userTokenKeys = await UserToken.keys(signingKey: fixture.clientSigningKey)
        try await measureAsync("user token, parse and HS256 verify (jwt-kit, UserToken)") {
            let claims = try UserToken.unverifiedClaims(fixture.userToken)
            try await UserToken.verify(fixture.userToken, with: userTokenKeys)
            return claims.subject.utf8.count
        }

        let loadgen = try LoadgenMicroFixture()
        try await measure("loadgen publish request written and its 202 framed (NotificationBodies, NIOHTTP1 in an EmbeddedChannel)") {
            try loadgen.exchange(body: loadgen.bodies.body(first: 4242, count: 1))
        }
        try await measure("loadgen 202 answer, read (PublishAnswer)") {
            PublishAnswer.items(status: 202, body: loadgen.acceptedAnswer, count: 1, batched: false).count
        }
        try await measure("loadgen delivery page, read (DeliveryPage, per record)", perCall: loadgen.recordsPerPage) {
            try DeliveryPage(decodingJSON: loadgen.deliveryPage).deliveries.count
        }
        try await measure("loadgen receivedAt, parsed (WireCoding.parseTimestamp)") { WireCoding.parseTimestamp(loadgen.receivedAt) == nil ? 0 : 1 }
        try await measure("loadgen receivedAt, parsed (Date.ISO8601FormatStyle)") {
            try Date(loadgen.receivedAt, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) == .distantPast ? 0 : 1
        }
        if sink == 42 { print("") }  // keeps the results alive

        let report = BenchmarkReport(
            mode: "micro", date: Date(), settings: [
                "seconds": "\(seconds)", "round": "\(round)", "jobsPerBatch": "\(batch.jobs.count)",
                "outcomesPerBatch": "\(outcomes.outcomes.count)",
            ],
            figures: figures)
        try report.write(to: output ?? BenchmarkReport.defaultOutput("micro"))
    }
}

/// Inputs shaped like the pipeline's: a visual notification with app data, 500 push jobs sharing its payload,
/// the outcomes of 100 of them (one in ten a 410), 100 change events, a P-256 key and a user token.
private struct MicroBenchFixture {
    let content: NotificationContent
    let marker: PushMarker
    let subscriptionId = UUID()
    let pushJobBatch: PushJobBatch
    let pushOutcomeBatch: PushOutcomeBatch
    let changeEventBatch: ChangeEventBatch
    let signingKeyPEM = P256.Signing.PrivateKey().pemRepresentation
    let clientSigningKey = "micro-bench-client-signing-key-of-32-bytes-or-more"
    let userToken: String

    init() async throws {
        content = NotificationContent(
            appNotificationId: "order-42", groupName: "orders", priority: .high, expirationDateTime: Date().addingTimeInterval(86_400),
            displayTimeToLive: nil, platformTypes: nil,
            payload: NotificationPayload(rawContent: #"{"orderId":42,"state":"shipped"}"#, visualContent: VisualContent(title: "Order shipped", body: "Your order #42 is on its way")),
            push: PushOptions(sound: "default", data: ["orderId": .number(42), "deepLink": .string("app://orders/42")]))
        let notificationId = UUID()
        marker = PushMarker(notificationId: notificationId, sequence: 7, kind: .created)
        let payload = String(decoding: APNsPayloadBuilder.payload(for: content, marker: marker, badge: 3), as: UTF8.self)
        let expiration = content.expirationDateTime
        pushJobBatch = PushJobBatch(jobs: (0..<500).map { index in
            let subscription = UUID()
            return PushJob(
                pushId: DeterministicID.pushID(notificationId: notificationId, sequence: 7, subscriptionId: subscription), appId: "app_micro",
                subscriptionId: subscription, platform: .apns, deviceToken: String(repeating: String(format: "%02x", index % 256), count: 32),
                notificationId: notificationId, sequence: 7, kind: .created, isAlert: true, priority: .high, expiration: expiration,
                collapseId: notificationId.uuidString.lowercased(), payload: payload)
        })
        let now = Date()
        pushOutcomeBatch = PushOutcomeBatch(outcomes: pushJobBatch.jobs.prefix(100).enumerated().map { index, job in
            let invalid = index % 10 == 9
            return PushOutcome(
                pushId: job.pushId, appId: job.appId, subscriptionId: job.subscriptionId, notificationId: job.notificationId, sequence: job.sequence,
                platform: job.platform, result: invalid ? .tokenInvalid : .accepted, status: invalid ? 410 : 200, reason: invalid ? "Unregistered" : nil,
                attempt: job.attempt, invalidSince: invalid ? now.addingTimeInterval(-3600) : nil, at: now)
        })
        let content = content
        changeEventBatch = ChangeEventBatch(events: (0..<100).map { index in
            ChangeEvent(
                appId: "app_micro", userId: "user-\(index)", sequence: Int64(index), kind: .created, notificationId: UUID(), content: content,
                readState: .unread, userActionState: .noInteraction, originSubscriptionId: nil, badge: 3, changedAt: Date())
        })
        userToken = try await UserToken.mint(userId: "user-1", appId: "app_micro", signingKey: clientSigningKey)
    }
}

/// What loadgen reads and writes per notification: a single-notification publish request, ingest's 202 (framed and
/// its body), and a page of 500 sandbox delivery records shaped like an APNs alert's.
private final class LoadgenMicroFixture {
    let bodies = NotificationBodies(users: (0..<100).map { "loadgen-user-\($0)" }, total: 100_000, batched: false)
    let request: HTTPPostRequest
    let allocator = ByteBufferAllocator()
    let acceptedAnswer = Array(#"{"id":"3f2c1a9e-6b1d-4c2e-9a7f-0d5e8b4c2a11"}"#.utf8)
    let acceptedResponse: ByteBuffer
    /// A connection's HTTP/1.1 codecs, as KeepAliveConnection sets them up, with no socket under them.
    let channel = EmbeddedChannel()
    let recordsPerPage = 500
    let deliveryPage: [UInt8]
    let receivedAt = "2026-11-22T17:30:15.123Z"

    init() throws {
        let endpoint = try PlainHTTPEndpoint(url: "http://127.0.0.1:21080")
        request = try HTTPPostRequest(endpoint: endpoint, path: "/v1/apps/app_micro/notifications", bearer: "nk_micro_0123456789abcdef")
        acceptedResponse = ByteBuffer(bytes: Array(
            "HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: \(acceptedAnswer.count)\r\n\r\n".utf8)
            + acceptedAnswer)
        try channel.pipeline.syncOperations.addHTTPClientHandlers(leftOverBytesStrategy: .fireError)
        var page = Array(#"{"deliveries":["#.utf8)
        for id in 1...recordsPerPage {
            let marker = PushMarker(notificationId: UUID(), sequence: 1, kind: .created)
            let content = NotificationContent(
                appNotificationId: "loadgen-\(id)", groupName: nil, priority: .high, expirationDateTime: Date().addingTimeInterval(86_400),
                displayTimeToLive: nil, platformTypes: nil,
                payload: NotificationPayload(rawContent: nil, visualContent: VisualContent(
                    title: "loadgen #\(id)", body: "Load test notification \(id) of 100000")),
                push: nil)
            if id > 1 { page.append(UInt8(ascii: ",")) }
            page.append(contentsOf: #"{"id":\#(id),"provider":"apns","deviceToken":"\#(String(repeating: "ab", count: 32))","#.utf8)
            page.append(contentsOf: #""headers":{"apns-priority":"10","apns-push-type":"alert","apns-topic":"com.example.loadgen"},"payload":"#.utf8)
            page.append(contentsOf: APNsPayloadBuilder.payload(for: content, marker: marker, badge: 1))
            page.append(contentsOf: #","receivedAt":"\#(receivedAt)"}"#.utf8)
        }
        page.append(contentsOf: #"],"lastId":\#(recordsPerPage)}"#.utf8)
        deliveryPage = page
    }

    /// Writes a publish request of `body` through the encoder, then hands the decoder a 202 to it; answers the bytes
    /// written and the answer's parts read.
    func exchange(body: [UInt8]) throws -> Int {
        let bodyBuffer = allocator.buffer(bytes: body)
        try channel.writeOutbound(HTTPClientRequestPart.head(request.head(bodyLength: bodyBuffer.readableBytes)))
        try channel.writeOutbound(HTTPClientRequestPart.body(.byteBuffer(bodyBuffer)))
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        var written = 0
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) { written += bytes.readableBytes }
        try channel.writeInbound(acceptedResponse)
        var parts = 0
        while try channel.readInbound(as: HTTPClientResponsePart.self) != nil { parts += 1 }
        return written + parts
    }
}
