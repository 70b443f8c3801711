/// Names of the exchanges and queues the services share.
public enum QueueNames {
    /// Exchange app servers publish notifications to, routing key = appId.
    public static let ingestExchange = "notify.ingest"
    public static let ingestQueue = "notify.ingest"
    /// Commands for storage, published to the default exchange.
    public static let storageCommands = "storage.commands"
    /// Fanout exchange storage publishes every change-event batch to: `fanoutChanges` is bound to it, and so is the live
    /// queue of each edge while it holds live streams (one publish reaches both).
    public static let changesExchange = "notify.changes"
    /// Change events from storage to fanout (bound to `changesExchange`).
    public static let fanoutChanges = "fanout.changes"
    /// Broadcast change events, moved here by fanout from `fanoutChanges`: a broadcast's audience is streamed in a lane
    /// of its own, so one-to-one changes never wait for it.
    public static let fanoutBroadcasts = "fanout.broadcasts"
    /// Exchange push jobs go to, routing key = `pushRoutingKey(platform, lane:)`.
    public static let pushExchange = "notify.push"
    /// The queue of one provider's push jobs in a lane: `push.<provider>` (interactive), `push.<provider>.bulk`.
    public static func pushQueue(_ platform: Platform, lane: PushLane = .interactive) -> String {
        "push.\(pushRoutingKey(platform, lane: lane))"
    }
    /// The routing key of one provider's push jobs in a lane on `pushExchange`.
    public static func pushRoutingKey(_ platform: Platform, lane: PushLane) -> String {
        lane == .interactive ? platform.rawValue : "\(platform.rawValue).\(lane.rawValue)"
    }
    /// Push jobs of an app whose provider answers slowly, set aside (they wait here, then go back to their lane's
    /// queue) so that they do not hold push-dispatch's prefetch while other apps' jobs wait behind them.
    public static let pushParked = "push.parked"
    /// Visual alerts held back for devices that may sync after a shoulder tap (`NOTIFY_VISUAL_FALLBACK_SECONDS`), until due.
    public static let pushVisualFallback = "push.fallback"
    /// Delivery outcomes from push-dispatch to storage.
    public static let pushFeedback = "push.feedback"
}

/// The lane a push job travels in. One-to-one notifications and state changes are interactive; a broadcast's pushes
/// are bulk. Each lane has queues and consumers of its own, and push-dispatch serves the interactive lane first when
/// both wait for a provider's in-flight slots, giving the bulk lane every few grants so it is never starved.
public enum PushLane: String, CaseIterable, Sendable {
    case interactive
    case bulk
}
