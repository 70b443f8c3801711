import Metrics
import NotifyModels
import NotifyRuntime

/// What push-dispatch counts per provider: every attempt's outcome, and how long the provider took to answer.
///
/// `notify_pushes_total{provider,result}` (result: accepted, retrying, tokenInvalid, credentialsRejected, failed),
/// `notify_push_duration_seconds{provider}`, `notify_push_parked_total{provider}` (jobs parked while their app's provider
/// answered slowly), and `notify_delivery_latency_seconds{provider}`: from the change (a
/// publish accepted by ingest) to the provider accepting its push, retries included. The handles are made once; a batch
/// adds its tally.
struct DispatchMetrics: Sendable {
    private let outcomes: [PushOutcome.Result: Counter]
    private let duration: Timer
    private let latency: Timer
    private let parked: Counter

    init(provider: Platform) {
        var outcomes: [PushOutcome.Result: Counter] = [:]
        for result in PushOutcome.Result.allCases {
            outcomes[result] = Counter(label: "notify_pushes_total", dimensions: [("provider", provider.rawValue), ("result", result.rawValue)])
        }
        self.outcomes = outcomes
        duration = Timer(label: "notify_push_duration_seconds", dimensions: [("provider", provider.rawValue)], preferredDisplayUnit: .seconds)
        latency = Timer(label: "notify_delivery_latency_seconds", dimensions: [("provider", provider.rawValue)], preferredDisplayUnit: .seconds)
        parked = Counter(label: "notify_push_parked_total", dimensions: [("provider", provider.rawValue)])
    }

    /// A push the provider accepted, `seconds` after its change was made.
    func recordDeliveryLatency(seconds: Double) {
        latency.recordNanoseconds(Int64(max(seconds, 0) * 1e9))
    }

    func recordAnswerTime(_ elapsed: Duration) {
        duration.record(elapsed)
    }

    /// Jobs of an app whose provider answers slowly, set aside to be tried again (`InFlightBudget`).
    func countParked(_ jobs: Int) {
        parked.increment(by: jobs)
    }

    func count(_ results: [PushOutcome.Result: Int]) {
        for (result, count) in results { outcomes[result]?.increment(by: count) }
    }
}
