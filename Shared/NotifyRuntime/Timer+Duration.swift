import Metrics

extension Metrics.Timer {
    /// Records `duration` (swift-metrics takes nanoseconds; a negative one counts as zero).
    public func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(max(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, 0))
    }
}
