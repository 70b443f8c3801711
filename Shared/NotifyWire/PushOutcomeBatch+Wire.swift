import Foundation
import NotifyModels

extension PushOutcomeBatch: WireMessage {
    public func wireBytes() -> Data {
        var batch = WirePushOutcomeBatch()
        batch.schemaVersion = WireFormat.schemaVersion
        batch.outcomes = outcomes.map(\.wire)
        return serialized(batch)
    }

    public init(wireBytes: Data) throws(WireDecodingError) {
        let batch = try readVersioned(WirePushOutcomeBatch.self, from: wireBytes, name: "PushOutcomeBatch") { $0.schemaVersion }
        var outcomes: [PushOutcome] = []
        outcomes.reserveCapacity(batch.outcomes.count)
        for (index, outcome) in batch.outcomes.enumerated() {
            outcomes.append(try PushOutcome(wire: outcome, "PushOutcomeBatch.outcomes[\(index)]"))
        }
        self.init(outcomes: outcomes)
    }
}

extension PushOutcome {
    var wire: WirePushOutcome {
        var outcome = WirePushOutcome()
        (outcome.pushIDHigh, outcome.pushIDLow) = pushId.wireHalves
        outcome.appID = appId
        (outcome.subscriptionIDHigh, outcome.subscriptionIDLow) = subscriptionId.wireHalves
        (outcome.notificationIDHigh, outcome.notificationIDLow) = notificationId.wireHalves
        outcome.sequence = sequence
        outcome.platform = platform.wire
        outcome.result = result.wire
        if let status { outcome.status = Int32(clamping: status) }
        if let reason { outcome.reason = reason }
        outcome.attempt = Int32(clamping: attempt)
        if let invalidSince { outcome.invalidSinceMicros = invalidSince.wireMicros }
        outcome.atMicros = at.wireMicros
        return outcome
    }

    init(wire: WirePushOutcome, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        self.init(
            pushId: try UUID(wireHigh: wire.pushIDHigh, low: wire.pushIDLow, "\(field()).push_id"), appId: wire.appID,
            subscriptionId: try UUID(wireHigh: wire.subscriptionIDHigh, low: wire.subscriptionIDLow, "\(field()).subscription_id"),
            notificationId: try UUID(wireHigh: wire.notificationIDHigh, low: wire.notificationIDLow, "\(field()).notification_id"),
            sequence: wire.sequence,
            platform: try Platform(wire: wire.platform, "\(field()).platform"), result: try Result(wire: wire.result, "\(field()).result"),
            status: wire.hasStatus ? Int(wire.status) : nil, reason: wire.hasReason ? wire.reason : nil, attempt: Int(wire.attempt),
            invalidSince: wire.hasInvalidSinceMicros ? Date(wireMicros: wire.invalidSinceMicros) : nil, at: Date(wireMicros: wire.atMicros))
    }
}

extension PushOutcome.Result {
    var wire: WirePushResult {
        switch self {
        case .accepted: .accepted
        case .retrying: .retrying
        case .tokenInvalid: .tokenInvalid
        case .credentialsRejected: .credentialsRejected
        case .failed: .failed
        }
    }

    init(wire: WirePushResult, _ field: @autoclosure () -> String) throws(WireDecodingError) {
        switch wire {
        case .accepted: self = .accepted
        case .retrying: self = .retrying
        case .tokenInvalid: self = .tokenInvalid
        case .credentialsRejected: self = .credentialsRejected
        case .failed: self = .failed
        case .unspecified, .UNRECOGNIZED: throw invalidEnum(field(), wire)
        }
    }
}
