import Foundation

/// A dependency-free SVG of a chaos run: per second, notifications accepted, pushes delivered (first arrivals) and
/// publishes not accepted, with each fault marked from its injection to its recovery.
enum ChaosTimelineSVG {
    static func render(
        publishes: [ChaosPublish], deliveredAt: [Double], faults: [ChaosReport.FaultOutcome], title: String
    ) -> String {
        let seconds = Int((Swift.max(publishes.map(\.sentAt).max() ?? 0, deliveredAt.max() ?? 0)).rounded(.up)) + 1
        var accepted = [Int](repeating: 0, count: seconds), failed = accepted, delivered = accepted
        for publish in publishes {
            let bucket = Swift.min(Int(publish.sentAt), seconds - 1)
            if publish.accepted { accepted[bucket] += 1 } else { failed[bucket] += 1 }
        }
        for time in deliveredAt where time >= 0 { delivered[Swift.min(Int(time), seconds - 1)] += 1 }
        let width = 1000.0, top = 50.0, plotHeight = 300.0, left = 60.0, plotWidth = 900.0
        let faultRows = 14.0 * Double(faults.count)
        let height = top + plotHeight + 60 + faultRows
        let peak = Double(Swift.max(accepted.max() ?? 1, delivered.max() ?? 1, failed.max() ?? 1, 1))
        func x(_ second: Double) -> Double { left + second / Double(seconds) * plotWidth }
        func y(_ count: Int) -> Double { top + plotHeight - Double(count) / peak * plotHeight }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(width / 2))" y="22" text-anchor="middle" font-size="14">\(SVGText.escape(title))</text>
            <rect x="\(f(left))" y="\(f(top))" width="\(f(plotWidth))" height="\(f(plotHeight))" fill="none" stroke="#888"/>

            """
        for (index, fault) in faults.enumerated() {
            let start = x(fault.injectedAt), end = Swift.max(x(fault.recoveredAt), start + 1)
            svg += "<rect x=\"\(f(start))\" y=\"\(f(top))\" width=\"\(f(end - start))\" height=\"\(f(plotHeight))\" fill=\"#f4a582\" fill-opacity=\"0.25\"/>\n"
            svg += "<line x1=\"\(f(start))\" x2=\"\(f(start))\" y1=\"\(f(top))\" y2=\"\(f(top + plotHeight))\" stroke=\"#b2182b\" stroke-dasharray=\"3,3\"/>\n"
            svg += "<text x=\"\(f(start + 2))\" y=\"\(f(top + 12 + Double(index % 4) * 12))\" fill=\"#b2182b\">\(index + 1)</text>\n"
            svg += "<text x=\"\(f(left))\" y=\"\(f(top + plotHeight + 50 + 14 * Double(index)))\">\(index + 1). \(SVGText.escape(fault.name)) at \(f(fault.injectedAt)) s\(fault.recoverySeconds.map { ", first end-to-end after it \(f($0)) s" } ?? "")</text>\n"
        }
        for tick in 0...4 {
            let value = Int((peak * Double(tick) / 4).rounded())
            svg += "<text x=\"\(f(left - 4))\" y=\"\(f(y(value) + 4))\" text-anchor=\"end\">\(value)</text>\n"
        }
        for tick in 0...10 {
            let second = Double(seconds) * Double(tick) / 10
            svg += "<text x=\"\(f(x(second)))\" y=\"\(f(top + plotHeight + 14))\" text-anchor=\"middle\">\(Int(second))</text>\n"
        }
        svg += "<text x=\"\(f(left + plotWidth / 2))\" y=\"\(f(top + plotHeight + 30))\" text-anchor=\"middle\">seconds since the start (per-second counts)</text>\n"
        for (series, color, label, row) in [(accepted, "#1f77b4", "accepted", 0), (delivered, "#2ca02c", "pushes delivered", 1), (failed, "#d62728", "not accepted", 2)] {
            let points = series.indices.map { "\(f(x(Double($0) + 0.5))),\(f(y(series[$0])))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\" points=\"\(points)\"/>\n"
            svg += "<text x=\"\(f(left + plotWidth - 120))\" y=\"\(f(top + 14 + 14 * Double(row)))\" fill=\"\(color)\">\(label)</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }
}
