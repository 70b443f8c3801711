/// One point of a sweep: a `loadgen http` report and the name of the directory it was written to.
struct SweepPoint: Sendable {
    let name: String
    let report: LoadReport

    /// The series it belongs to: its kind of load (a fixed rate for how long, or a closed loop), batch and devices per user.
    var group: String {
        let kind = plannedSeconds.map { String(format: "fixed rate for %.0f s", $0) } ?? "closed loop"
        let batch = report.settings.batch == 1 ? "" : ", batches of \(report.settings.batch)"
        let devices = report.settings.devicesPerUser == 1 ? "1 device" : "\(report.settings.devicesPerUser) devices"
        return "\(kind)\(batch), \(devices) per user"
    }

    /// What was offered: a rate, or a number of requests kept in flight.
    var offered: String {
        report.settings.rate == 0 ? "closed loop, \(report.settings.concurrency) in flight" : "\(NumberText.grouped(report.settings.rate))/s"
    }

    /// Seconds of publishing the point planned (its count at its rate); nil for a closed loop.
    var plannedSeconds: Double? {
        report.settings.rate > 0 ? Double(report.settings.count) / report.settings.rate : nil
    }
}
