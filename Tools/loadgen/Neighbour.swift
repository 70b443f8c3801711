/// App A of `loadgen neighbours`: set up before the quiet app B starts, then run beside it.
protocol Neighbour: Sendable {
    /// Runs A's load beside B and sums up what became of it.
    func run(_ context: NeighbourContext) async throws -> NeighbourSummary
    /// Once B is done too: undoes what would go on weighing on the stack (faults, a webhook, connections), then waits
    /// up to `drainTimeout` for what A had accepted and not delivered yet; answers `summary` with those late arrivals.
    func finish(_ summary: NeighbourSummary?, drainTimeout: Duration) async -> NeighbourSummary?
}

/// What a neighbour is told about the case it runs in.
struct NeighbourContext: Sendable {
    /// How long A keeps up its load (a broadcast: until its last push, at most its own timeout).
    let seconds: Int
    /// How long A waits, after its load, for what it should deliver.
    let drainTimeout: Duration
    /// Stops B's publishing (a broadcast sets it once its last push arrived).
    let quietStop: PublishStop
    /// B's pushes as the sandbox recorded them.
    let quietDeliveries: DeliveryCollector
}

/// What became of A's load in one case. Refused (429) notifications are not losses: ingest told A to send them later.
struct NeighbourSummary: Codable, Sendable {
    var accepted: Int
    var refused: Int
    /// Pushes (or, for webhook events, POSTs) that arrived at the sandbox.
    var delivered: Int
    /// Of `delivered`, the pushes that arrived only after the drain timeout, once A's load was lifted.
    var late = 0
    /// Accepted and never delivered; nil where A's load is not meant to arrive (webhook events for a dead receiver).
    var lost: Int?
    /// One line for the report's table.
    var detail: String
}
