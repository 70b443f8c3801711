import Foundation

/// A dependency-free SVG of a sweep: request latency, 202 -> push latency and CPU per notification against the
/// requests per second each point reached, one series per kind of point (fixed rate or closed loop, devices per user).
enum SweepSVG {
    static let colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf"]

    static func render(points: [SweepPoint], title: String) -> String {
        let groups = Dictionary(grouping: points, by: \.group).sorted { $0.key < $1.key }
        let rates = points.map(\.report.requestsPerSecond)
        let latencies = points.flatMap { [$0.report.publishLatencyMs, $0.report.endToEndLatencyMs] }.flatMap { [$0.p50, $0.p99] }
        let xAxis = SVGPanel.Axis(covering: rates, logarithmic: true, label: "requests/s reached")
        let latencyAxis = SVGPanel.Axis(covering: latencies, logarithmic: true, label: "ms")
        let cpuAxis = SVGPanel.Axis(covering: points.map(\.report.cpu.totalMicrosecondsPerUnit), logarithmic: true, label: "µs per notification")
        let (top, width, height) = (60.0, 320.0, 300.0)
        let panels = [
            SVGPanel(left: 70, top: top, width: width, height: height, x: xAxis, y: latencyAxis),
            SVGPanel(left: 470, top: top, width: width, height: height, x: xAxis, y: latencyAxis),
            SVGPanel(left: 870, top: top, width: width, height: height, x: xAxis, y: cpuAxis),
        ]
        let legendTop = top + height + 50
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="1220" height="\(Int(legendTop + 20 * Double(groups.count) + 40))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="610" y="22" text-anchor="middle" font-size="14">\(SVGText.escape(title))</text>

            """
        svg += panels[0].frame(title: "request latency (p50, p99)")
        svg += panels[1].frame(title: "202 → push at the sandbox (p50, p99)")
        svg += panels[2].frame(title: "CPU per notification, all processes")
        for (index, (group, members)) in groups.enumerated() {
            let color = colors[index % colors.count]
            let sorted = members.sorted { $0.report.requestsPerSecond < $1.report.requestsPerSecond }
            func values(_ value: (LoadReport) -> Double) -> [(x: Double, y: Double, flagged: Bool)] {
                sorted.map { ($0.report.requestsPerSecond, value($0.report), !$0.report.backlog.keptUp) }
            }
            svg += panels[0].series(values { $0.publishLatencyMs.p50 }, color: color, dashed: false)
            svg += panels[0].series(values { $0.publishLatencyMs.p99 }, color: color, dashed: true)
            svg += panels[1].series(values { $0.endToEndLatencyMs.p50 }, color: color, dashed: false)
            svg += panels[1].series(values { $0.endToEndLatencyMs.p99 }, color: color, dashed: true)
            svg += panels[2].series(values { $0.cpu.totalMicrosecondsPerUnit }, color: color, dashed: false)
            let y = legendTop + 20 * Double(index)
            svg += "<rect x=\"70\" y=\"\(SVGPanel.format(y - 9))\" width=\"12\" height=\"12\" fill=\"\(color)\"/>"
            svg += "<text x=\"88\" y=\"\(SVGPanel.format(y + 1))\">\(SVGText.escape(group))</text>\n"
        }
        let noteY = legendTop + 20 * Double(groups.count) + 10
        svg += "<text x=\"70\" y=\"\(SVGPanel.format(noteY))\">filled circles, solid: p50; hollow squares, dashed: p99; "
            + "red ring: delivery did not keep up (a growing backlog, or refused, failed or lost)</text>\n"
        svg += "</svg>\n"
        return svg
    }
}
