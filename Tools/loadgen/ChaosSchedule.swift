import Foundation

/// One fault of a chaos run: at `at` seconds from the start `inject` runs, and `recover` (if any) `lasting`
/// seconds after it returned.
struct ChaosFault: Sendable {
    enum Action: Sendable {
        /// A command of deploy/local (run by bash from the scripts directory, with the run's environment).
        case shell(String)
        /// Scripted answers at the provider sandbox for some of the run's devices.
        case providerBurst(ProviderBurst)
    }

    /// What the sandbox does to the next pushes to a share of the devices.
    enum ProviderBurst: String, Sendable {
        /// 500 InternalServerError, twice per device.
        case serverErrors = "5xx"
        /// 429 TooManyRequests with Retry-After: 1, once per device.
        case throttled = "429"
        /// An answer 12 s late: push-dispatch's provider timeout (10 s) ends the request first.
        case timeouts
        /// The connection closed under the request, once per device.
        case droppedConnections = "dropped connections"
    }

    var at: Double
    let name: String
    let inject: Action
    let recover: String?
    let lasting: Double
    /// Whether the run times how long the database takes to accept writes again after it.
    var probesDatabase = false
}

/// The faults of a chaos run: a fixed cycle (kill -9 of each service, one and two at once, graceful restarts, a
/// broker node killed, the database's primary lost for good or killed, a standby killed, an etcd member killed,
/// HAProxy restarted, provider bursts of 5xx, 429, timeouts and dropped connections), spread evenly over the run, at
/// least `cycle.count` of them.
enum ChaosSchedule {
    static func faults(duration: Double) -> [ChaosFault] {
        let count = max(cycle.count, Int(duration / 6))
        // Nothing in the last 8 s, so the last fault has recovered before publishing stops.
        let spacing = max(duration - 8, 1) / Double(count)
        return (0..<count).map { index in
            var fault = cycle[index % cycle.count]
            fault.at = 2 + Double(index) * spacing
            return fault
        }
    }

    private static func kill(_ services: String, for seconds: Double = 2) -> ChaosFault {
        ChaosFault(
            at: 0, name: "kill -9 \(services)", inject: .shell("./services.sh kill \(services)"),
            recover: "./services.sh start \(services)", lasting: seconds)
    }

    private static func restart(_ service: String) -> ChaosFault {
        ChaosFault(at: 0, name: "restart \(service)", inject: .shell("./services.sh restart \(service)"), recover: nil, lasting: 0)
    }

    private static func killNode(_ node: Int) -> ChaosFault {
        ChaosFault(
            at: 0, name: "kill -9 RabbitMQ node \(node)", inject: .shell("./rabbitmq-cluster.sh kill-node \(node)"),
            recover: "./rabbitmq-cluster.sh start-node \(node)", lasting: 4)
    }

    private static func burst(_ kind: ChaosFault.ProviderBurst) -> ChaosFault {
        ChaosFault(at: 0, name: "provider \(kind.rawValue)", inject: .providerBurst(kind), recover: nil, lasting: 0)
    }

    /// A fault of the Patroni cluster (patroni-cluster.sh): `recover` brings back whatever it stopped (a lost member
    /// is built afresh from the primary, a killed primary rejoins as a standby with pg_rewind) and waits until the
    /// cluster has a primary and a synchronous standby again.
    private static func database(_ name: String, _ command: String, for seconds: Double) -> ChaosFault {
        ChaosFault(
            at: 0, name: name, inject: .shell("./patroni-cluster.sh \(command)"), recover: seconds > 0 ? "./patroni-cluster.sh recover" : nil,
            lasting: seconds, probesDatabase: true)
    }

    /// Node kills are at least 5 faults apart, so two nodes are never down at once (the cluster keeps its majority).
    /// The database faults that take a member away are 11 and 7 faults apart (at the 90 s run's spacing, 35 and 22 s:
    /// a failover takes about 10 s and the cluster is whole again some seconds after the recovery), so that a standby
    /// is killed only while there is a primary; HAProxy's restart and the etcd member's kill come during a failover.
    static let cycle: [ChaosFault] = [
        database("PostgreSQL primary lost (its machine gone)", "lose-primary", for: 12), kill("storage"), kill("fanout"), kill("push-dispatch"),
        database("HAProxy restarted", "restart-haproxy", for: 0), kill("ingest"), kill("storage-2 fanout-2", for: 3),
        restart("push-dispatch-2"), database("etcd member killed", "kill-etcd 1", for: 4), burst(.serverErrors), killNode(2),
        database("PostgreSQL standby killed", "kill-standby", for: 4), restart("ingest-2"), burst(.throttled), burst(.timeouts),
        kill("ingest-2 push-dispatch"), burst(.droppedConnections), restart("storage"),
        database("PostgreSQL primary killed (rejoins as a standby)", "kill-primary", for: 10), killNode(1), kill("fanout-2"),
        burst(.serverErrors), restart("fanout"),
        kill("push-dispatch-2 storage"), killNode(3), restart("storage-2"),
    ]
}
