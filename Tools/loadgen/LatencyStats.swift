import Histogram

/// Percentiles of one latency distribution, in milliseconds (recorded in microseconds).
struct LatencyStats: Codable, Sendable {
    let count: Int
    let p50: Double
    let p90: Double
    let p99: Double
    let p99_9: Double
    let max: Double
    let mean: Double

    static let highestMicroseconds: UInt64 = 3_600_000_000

    static func histogram() -> Histogram<UInt64> {
        Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: highestMicroseconds, numberOfSignificantValueDigits: .three)
    }

    static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        let value = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        return UInt64(Swift.min(Swift.max(value, 0), Int64(highestMicroseconds)))
    }

    init(_ histogram: Histogram<UInt64>) {
        func ms(_ microseconds: UInt64) -> Double { (Double(microseconds) / 1000 * 100).rounded() / 100 }
        count = Int(histogram.totalCount)
        if histogram.totalCount == 0 {
            p50 = 0; p90 = 0; p99 = 0; p99_9 = 0; max = 0; mean = 0
            return
        }
        p50 = ms(histogram.valueAtPercentile(50))
        p90 = ms(histogram.valueAtPercentile(90))
        p99 = ms(histogram.valueAtPercentile(99))
        p99_9 = ms(histogram.valueAtPercentile(99.9))
        max = ms(histogram.maxRecorded)
        mean = (histogram.mean / 1000 * 100).rounded() / 100
    }
}
