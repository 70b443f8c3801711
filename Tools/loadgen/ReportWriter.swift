import Foundation

/// Writes report.json, report.md and latency.svg into the output directory.
enum ReportWriter {
    static func write(report: LoadReport, markdown: String, analysis: Analysis, to directory: String) throws {
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(report).write(to: url.appending(path: "report.json"))
        try Data(markdown.utf8).write(to: url.appending(path: "report.md"))
        let title = "loadgen http: \(report.deliveredPushes) pushes, \(report.settings.count) notifications, batch \(report.settings.batch)"
        let svg = LatencySVG.render(points: analysis.points, histogram: analysis.endToEnd, title: title)
        try Data(svg.utf8).write(to: url.appending(path: "latency.svg"))
    }
}
