import Foundation
import NotifyModels

/// What a provider's answer means for one push.
enum PushAction: Equatable, Sendable {
    case accepted
    /// Try again later (through a retry queue), no sooner than `after` seconds if given.
    case retry(after: Int?)
    /// The device token is gone: remove the subscription unless it was registered again after `since`.
    case tokenInvalid(since: Date?)
    /// The provider refused the app's credentials (after one refresh): flag them, delete nothing.
    case credentials
    /// A bug in the payload or request, or no credentials: retrying cannot help.
    case fail
}

/// One attempt's action with the provider's status and reason, for the log and the delivery log.
struct PushVerdict: Sendable {
    var action: PushAction
    var status: Int?
    var reason: String?
}

/// What came of one job: the verdict, and how long the provider took to answer.
struct PushAttempt: Sendable {
    var verdict: PushVerdict
    var answerTime: Duration
}

/// A push provider (APNs, FCM, WNS, Web Push): sends a batch of jobs and says what each answer means.
protocol PushProvider: Sendable {
    var platform: Platform { get }
    /// Sends every job and answers each one's attempt, in the order of `jobs`. `concurrency` bounds the pushes in
    /// flight of a provider that sends each push as a request of its own; APNs multiplexes its pushes as HTTP/2
    /// streams, bounded by the streams its connections allow.
    func deliver(_ jobs: [PushJob], concurrency: Int) async -> [PushAttempt]
}

/// A provider whose every push is an HTTP request of its own (FCM, WNS, Web Push): a batch runs as child tasks,
/// at most `concurrency` at once.
protocol SinglePushProvider: PushProvider {
    func deliver(_ job: PushJob) async -> PushVerdict
}

extension SinglePushProvider {
    func deliver(_ jobs: [PushJob], concurrency: Int) async -> [PushAttempt] {
        await withTaskGroup(of: (index: Int, attempt: PushAttempt).self, returning: [PushAttempt].self) { group in
            var answered: [(index: Int, attempt: PushAttempt)] = []
            answered.reserveCapacity(jobs.count)
            for (index, job) in jobs.enumerated() {
                if index >= concurrency, let result = await group.next() {
                    answered.append(result)
                }
                group.addTask {
                    let started = ContinuousClock.now
                    let verdict = await deliver(job)
                    return (index, PushAttempt(verdict: verdict, answerTime: ContinuousClock.now - started))
                }
            }
            for await result in group { answered.append(result) }
            return answered.sorted { $0.index < $1.index }.map(\.attempt)
        }
    }
}
