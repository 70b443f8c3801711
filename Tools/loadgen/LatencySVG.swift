import Foundation
import Histogram

/// A dependency-free SVG: end-to-end latency of every push over time (left) and the percentile
/// curve of the same distribution (right).
enum LatencySVG {
    static let maximumPoints = 20_000

    static func render(points: [Analysis.Point], histogram: Histogram<UInt64>, title: String) -> String {
        let width = 1000.0, height = 420.0, panel = 430.0, top = 50.0, plotHeight = 300.0
        let leftX = 60.0, rightX = 560.0
        let percentiles: [Double] = [0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.99, 100]
        let curve = histogram.totalCount == 0 ? [] : percentiles.map { p in
            (p, Double(p == 100 ? histogram.maxRecorded : histogram.valueAtPercentile(p)) / 1000)
        }
        let maxLatency = Swift.max(points.map(\.latencyMs).max() ?? 1, curve.map(\.1).max() ?? 1, 1)
        let maxTime = Swift.max(points.map(\.acceptedOffset).max() ?? 1, 0.001)
        func y(_ latency: Double) -> Double { top + plotHeight - latency / maxLatency * plotHeight }
        func f(_ value: Double) -> String { String(format: "%.1f", value) }

        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(f(width / 2))" y="22" text-anchor="middle" font-size="14">\(SVGText.escape(title))</text>

            """
        for (x0, label) in [(leftX, "seconds since first 202"), (rightX, "percentile (log scale of 1/(1-p))")] {
            svg += "<rect x=\"\(f(x0))\" y=\"\(f(top))\" width=\"\(f(panel))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#888\"/>\n"
            svg += "<text x=\"\(f(x0 + panel / 2))\" y=\"\(f(top + plotHeight + 32))\" text-anchor=\"middle\">\(label)</text>\n"
            for tick in 0...4 {
                let value = maxLatency * Double(tick) / 4
                svg += "<text x=\"\(f(x0 - 4))\" y=\"\(f(y(value) + 4))\" text-anchor=\"end\">\(f(value))</text>\n"
                svg += "<line x1=\"\(f(x0))\" x2=\"\(f(x0 + panel))\" y1=\"\(f(y(value)))\" y2=\"\(f(y(value)))\" stroke=\"#eee\"/>\n"
            }
        }
        svg += "<text x=\"14\" y=\"\(f(top + plotHeight / 2))\" transform=\"rotate(-90 14 \(f(top + plotHeight / 2)))\" text-anchor=\"middle\">latency ms (202 → sandbox)</text>\n"
        for tick in 0...4 {
            let t = maxTime * Double(tick) / 4
            svg += "<text x=\"\(f(leftX + panel * Double(tick) / 4))\" y=\"\(f(top + plotHeight + 14))\" text-anchor=\"middle\">\(f(t))</text>\n"
        }
        let stride = Swift.max(1, points.count / maximumPoints)
        svg += "<g fill=\"#1f77b4\" fill-opacity=\"0.5\">\n"
        for index in Swift.stride(from: 0, to: points.count, by: stride) {
            let point = points[index]
            svg += "<circle cx=\"\(f(leftX + point.acceptedOffset / maxTime * panel))\" cy=\"\(f(y(point.latencyMs)))\" r=\"1.5\"/>\n"
        }
        svg += "</g>\n"
        // Percentile axis: x = log10(1 / (1 - p)), 0 ... 4 (p = 0 ... 99.99); 100 is drawn at the right edge.
        func px(_ p: Double) -> Double {
            let nines = p >= 100 ? 4.0 : Swift.min(log10(1 / (1 - p / 100)), 4)
            return rightX + nines / 4 * panel
        }
        for label in [0.0, 90, 99, 99.9, 99.99] {
            svg += "<text x=\"\(f(px(label)))\" y=\"\(f(top + plotHeight + 14))\" text-anchor=\"middle\">\(label == 0 ? "0" : String(label))</text>\n"
        }
        if !curve.isEmpty {
            let path = curve.map { "\(f(px($0.0))),\(f(y($0.1)))" }.joined(separator: " ")
            svg += "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" points=\"\(path)\"/>\n"
            for (p, value) in curve where [50.0, 90, 99, 99.9].contains(p) {
                svg += "<circle cx=\"\(f(px(p)))\" cy=\"\(f(y(value)))\" r=\"3\" fill=\"#d62728\"/>"
                svg += "<text x=\"\(f(px(p) + 4))\" y=\"\(f(y(value) - 6))\">p\(p == 50 ? "50" : String(p)) \(f(value)) ms</text>\n"
            }
        }
        svg += "</svg>\n"
        return svg
    }
}
