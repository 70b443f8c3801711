import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import Metrics
import NIOCore
import NotifyModels
import NotifyOutbound
import NotifyRuntime
import NotifyStore
import ServiceLifecycle
import Synchronization

/// Polls the back ends apps registered (`poll_sources`) and publishes what they answer through the normal intake.
///
/// One ingest instance at a time polls a source: the one holding its lease (`PollLeases`, looked at again at every
/// reload of the sources). Every `intervalSeconds` a source is fetched (GET, its Authorization header, 10 s, at most
/// 1 MiB); the answer is `{"notifications": [...]}` in the publish format, and each item must carry an
/// `appNotificationId`. Only new and changed items become storage commands: the source's ledger (`poll_items`, which
/// storage keeps) is read once per poll, and an item whose digest it holds for its notification is left out. Each
/// command says which item it was made from (`PolledItem`), so storage too skips one the ledger holds (when this read
/// came before storage applied the last poll's), whatever became of its idempotency record; a changed item replaces
/// the notification (pushed as an update). An item's command id derives from the source, its appNotificationId and its
/// digest, so a command sent twice is applied once. A failing back end (a non-200 answer, no answer, a body that is not
/// such a document) is asked again after twice the wait each time, at most an hour. Each source keeps its own schedule,
/// polled in a task of its own, so a back end that hangs holds only its own source.
struct PollIngestion: Service {
    /// The poll sources and what each served (read on the primary: storage writes the ledger).
    let store: any AppStore
    let intake: NotificationIntake
    let targets: any TargetDirectory
    let sender: CommandSender
    /// Opens the sources' sealed Authorization headers.
    let keyring: SecretKeyring
    /// Fetches through the outbound address policy, redirects not followed: a poll source's URL is a tenant's.
    let http: OutboundHTTPClient
    /// Which sources this instance polls.
    let leases: PollLeases
    let logger: Logger
    /// How often the list of sources is read again (and the leases looked at).
    var reloadInterval: Duration = .seconds(5)
    /// The shortest pause between two turns (a source due now waits this long when the last turn polled others).
    var minimumPause: Duration = .milliseconds(10)

    private struct SourceKey: Hashable {
        var appId: String
        var name: String

        var lease: Int64 { PollLeaseKeys.source(appId: appId, name: name) }
    }

    private struct Schedule {
        var next: ContinuousClock.Instant
        var failures: Int
    }

    /// When each source is due, and which are being polled now.
    private final class Turns: Sendable {
        let schedules = Mutex<[SourceKey: Schedule]>([:])
        let inFlight = Mutex<Set<SourceKey>>([])
    }

    private static let polls = (ok: Counter(label: "notify_poll_requests_total", dimensions: [("result", "ok")]),
                                failed: Counter(label: "notify_poll_requests_total", dimensions: [("result", "failed")]))
    private static let published = Counter(label: "notify_poll_notifications_total")
    static let maximumBody = 1 << 20
    static let maximumBackoff: Duration = .seconds(3600)

    func run() async throws {
        let turns = Turns()
        let polled = Nudge()
        var sources: [PollSourceRecord] = []
        var nextReload = ContinuousClock.now
        // Each source is polled on its own schedule in a task of its own: a back end that answers slowly (or not, until
        // its 10 s timeout) holds only its own source, never the others' turns.
        await withDiscardingTaskGroup { group in
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let now = ContinuousClock.now
                if nextReload <= now {
                    do {
                        sources = try await load()
                        nextReload = now + reloadInterval
                        await leases.rebalance(sources.map { SourceKey(appId: $0.appId, name: $0.name).lease })
                    } catch {
                        logger.debug("could not read the poll sources; will try again", metadata: ["error": "\(error)"])
                        nextReload = now + min(reloadInterval, .seconds(1))
                    }
                }
                let known = turns.schedules.withLock { $0 }
                let leased = sources.filter { leases.holds(SourceKey(appId: $0.appId, name: $0.name).lease) }
                for source in leased {
                    let key = SourceKey(appId: source.appId, name: source.name)
                    guard known[key].map({ $0.next <= now }) ?? true, turns.inFlight.withLock({ $0.insert(key).inserted }) else { continue }
                    group.addTask {
                        // The lease's session answers right before the poll; a lost lease ends this turn unpolled.
                        guard await leases.confirm(key.lease) else {
                            turns.inFlight.withLock { _ = $0.remove(key) }
                            return
                        }
                        let answered = await poll(source)
                        turns.schedules.withLock { schedules in
                            let failures = answered ? 0 : (schedules[key]?.failures ?? 0) + 1
                            let interval = Duration.seconds(source.intervalSeconds)
                            let wait = failures == 0 ? interval : min(interval * (1 << min(failures, 20)), Self.maximumBackoff)
                            schedules[key] = Schedule(next: .now + wait, failures: failures)
                        }
                        turns.inFlight.withLock { _ = $0.remove(key) }
                        polled.nudge()
                    }
                }
                // Asleep until the next source is due, a poll ends, or the list is read again (an app without poll sources
                // wakes this loop once per reload, not several times a second).
                var next = nextReload
                let current = turns.schedules.withLock { $0 }
                let busy = turns.inFlight.withLock { $0 }
                for source in leased {
                    let key = SourceKey(appId: source.appId, name: source.name)
                    if !busy.contains(key), let due = current[key]?.next, due < next { next = due }
                }
                await polled.pause(upTo: max(next - .now, minimumPause))
            }
            // Shutting down: the group waits for the polls under way, each within its timeout.
        }
        await leases.close()
        await http.shutdown()
    }

    private func load() async throws -> [PollSourceRecord] {
        var sources: [PollSourceRecord] = []
        for var source in try await store.allPollSources() {
            do {
                source.authorization = try source.authorization.map {
                    try keyring.openText($0, for: .pollSourceAuthorization(appId: source.appId, name: source.name))
                }
            } catch {
                logger.error(
                    "a poll source's Authorization header does not open; not polled",
                    metadata: ["appId": "\(source.appId)", "pollSource": "\(source.name)", "error": "\(error)"])
                continue
            }
            sources.append(source)
        }
        return sources
    }

    /// Fetches one source and publishes its items; answers whether the back end answered as it should.
    private func poll(_ source: PollSourceRecord) async -> Bool {
        let metadata: Logger.Metadata = ["appId": "\(source.appId)", "pollSource": "\(source.name)"]
        let body: ByteBuffer
        do {
            var request = HTTPClientRequest(url: source.url)
            request.headers.add(name: "Accept", value: "application/json")
            if let authorization = source.authorization { request.headers.add(name: "Authorization", value: authorization) }
            let response = try await http.execute(request, timeout: .seconds(10))
            guard response.status == .ok else {
                Self.polls.failed.increment()
                logger.warning("a poll source answered \(response.status.code)", metadata: metadata)
                return false
            }
            body = try await response.body.collect(upTo: Self.maximumBody)
        } catch {
            Self.polls.failed.increment()
            logger.warning("a poll source could not be read", metadata: metadata.merging(["error": "\(error)"]) { $1 })
            return false
        }
        let items: [NotificationRequest]
        do {
            items = try PublishBody.decode(body.readableBytesView).items.compactMap { item in
                switch item {
                case .success(let request) where request.appNotificationId != nil: return request
                case .success:
                    logger.warning("a polled notification has no appNotificationId; skipped", metadata: metadata)
                    return nil
                case .failure(let error):
                    logger.warning("a polled notification is invalid; skipped", metadata: metadata.merging(["error": "\(error)"]) { $1 })
                    return nil
                }
            }
        } catch {
            Self.polls.failed.increment()
            logger.warning("a poll source's answer is not a publish body", metadata: metadata.merging(["error": "\(error.body.error.message)"]) { $1 })
            return false
        }
        Self.polls.ok.increment()
        guard !items.isEmpty else { return true }
        do {
            let ledger: [UUID: String]
            do {
                ledger = try await servedBefore(by: source)
            } catch {
                // Storage skips what its ledger holds: sending every item costs messages, not pushes.
                logger.warning(
                    "a poll source's ledger cannot be read; every item it served is sent", metadata: metadata.merging(["error": "\(error)"]) { $1 })
                ledger = [:]
            }
            let resolved = try await ResolvedTargets.resolve(items, appId: source.appId, in: targets)
            var commands: [StorageCommand] = []
            for item in items {
                let digest = Self.digest(item)
                let outcome = intake.accept(
                    [.success(item)], form: .single, appId: source.appId, idempotencyKey: Self.key(item, digest: digest, of: source), targets: resolved)
                if let error = outcome.results.first?.error {
                    logger.warning("a polled notification was refused", metadata: metadata.merging(["error": "\(error.message)"]) { $1 })
                }
                // Served before as it is now: its notification is made already.
                if let notificationId = outcome.results.first?.id, ledger[notificationId] == digest { continue }
                let polled = PolledItem(source: source.name, appNotificationId: item.appNotificationId ?? "", digest: digest)
                commands += outcome.commands.map { command in
                    var command = command
                    command.polledItem = polled
                    return command
                }
            }
            guard !commands.isEmpty else { return true }
            try await sender.send(commands)
            Self.published.increment(by: Int64(commands.count))
        } catch {
            // The broker or the database is down: asked again at the next interval, which publishes the same commands.
            logger.warning("polled notifications not published; will try again", metadata: metadata.merging(["error": "\(error)"]) { $1 })
        }
        return true
    }

    /// The digest of each notification the source's items were made into, as storage's ledger holds it (read on the
    /// primary: storage writes it).
    private func servedBefore(by source: PollSourceRecord) async throws -> [UUID: String] {
        try await store.pollLedger(appId: source.appId, source: source.name)
    }

    /// A digest of the item's JSON (keys sorted): lowercase hex of SHA-256's first 16 bytes.
    static func digest(_ item: NotificationRequest) -> String {
        let encoder = WireCoding.makeEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = (try? encoder.encode(item)) ?? Data()
        return SHA256.hash(data: json).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The item's idempotency key: the source, its appNotificationId and its digest.
    static func key(_ item: NotificationRequest, digest: String, of source: PollSourceRecord) -> String {
        "poll:\(source.name):\(item.appNotificationId ?? ""):\(digest)"
    }
}
