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
    /// Exchange push jobs go to, routing key = platform.
    public static let pushExchange = "notify.push"
    /// The queue of one provider's push jobs.
    public static func pushQueue(_ platform: Platform) -> String { "push.\(platform.rawValue)" }
    /// Visual alerts held back for devices that may sync after a shoulder tap (`NOTIFY_VISUAL_FALLBACK_SECONDS`), until due.
    public static let pushVisualFallback = "push.fallback"
    /// Delivery outcomes from push-dispatch to storage.
    public static let pushFeedback = "push.feedback"
}
