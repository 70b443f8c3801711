/// When each notification of a run is due: steps of a fixed rate, each for a number of notifications, one after the
/// other (`loadgen overload`'s 3R then R/2); no steps = flat out, as fast as the concurrency allows.
struct RateSchedule: Sendable {
    struct Step: Sendable {
        /// Notifications per second, more than 0.
        let rate: Double
        let count: Int
    }

    let steps: [Step]

    /// `count` notifications at `rate` per second; rate 0 = flat out.
    static func fixed(rate: Double, count: Int) -> RateSchedule {
        RateSchedule(steps: rate > 0 ? [Step(rate: rate, count: count)] : [])
    }

    var isFlatOut: Bool { steps.isEmpty }

    /// Seconds after the start at which notification `n` is due; nil when flat out. Past the last step the last rate
    /// goes on.
    func offset(of n: Int) -> Double? {
        guard let last = steps.last else { return nil }
        var seconds = 0.0
        var first = 0
        for step in steps.dropLast() {
            if n < first + step.count { return seconds + Double(n - first) / step.rate }
            seconds += Double(step.count) / step.rate
            first += step.count
        }
        return seconds + Double(n - first) / last.rate
    }

    /// The notifications of step `index`: its range of sequence numbers.
    func sequences(ofStep index: Int) -> Range<Int> {
        let first = steps.prefix(index).reduce(0) { $0 + $1.count }
        return first..<first + steps[index].count
    }
}
