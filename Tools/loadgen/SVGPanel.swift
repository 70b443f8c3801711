import Foundation

/// One plot area of a dependency-free SVG: a frame with ticked, labelled axes (linear, or logarithmic for values that
/// span decades) and the series drawn in it, each value mapped to its pixel.
struct SVGPanel {
    struct Axis {
        let low: Double
        let high: Double
        let logarithmic: Bool
        let label: String

        /// An axis covering `values` (log: from the power of ten below the least to the one above the most).
        init(covering values: [Double], logarithmic: Bool, label: String) {
            self.logarithmic = logarithmic
            self.label = label
            let positive = values.filter { $0 > 0 && $0.isFinite }
            if logarithmic {
                low = pow(10, floor(log10(positive.min() ?? 1)))
                high = Swift.max(pow(10, ceil(log10(positive.max() ?? 10))), low * 10)
            } else {
                low = 0
                high = Self.niceCeiling(Swift.max(positive.max() ?? 1, 1e-9))
            }
        }

        /// Where `value` lies between the ends, 0 to 1.
        func fraction(_ value: Double) -> Double {
            guard logarithmic else { return (value - low) / (high - low) }
            return (log10(Swift.max(value, low)) - log10(low)) / (log10(high) - log10(low))
        }

        /// Tick values: 1, 2 and 5 times each power of ten on a log axis (1 and 10 only over many decades), fifths on
        /// a linear one.
        var ticks: [Double] {
            guard logarithmic else { return (0...5).map { low + (high - low) * Double($0) / 5 } }
            let decades = Int((log10(high) - log10(low)).rounded())
            let steps: [Double] = decades > 3 ? [1] : [1, 2, 5]
            return (0...decades).flatMap { decade in steps.map { low * pow(10, Double(decade)) * $0 } }.filter { $0 <= high * 1.0001 }
        }

        /// The least of 1, 2 and 5 times a power of ten at or above `value`.
        private static func niceCeiling(_ value: Double) -> Double {
            let power = pow(10, floor(log10(value)))
            return [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= value } ?? value
        }
    }

    let left: Double
    let top: Double
    let width: Double
    let height: Double
    let x: Axis
    let y: Axis

    func px(_ value: Double) -> Double { left + x.fraction(value) * width }
    func py(_ value: Double) -> Double { top + height - y.fraction(value) * height }

    /// The frame, grid lines, tick labels, axis labels and a title above.
    func frame(title: String) -> String {
        let f = Self.format
        var svg = "<text x=\"\(f(left + width / 2))\" y=\"\(f(top - 8))\" text-anchor=\"middle\" font-size=\"12\">\(SVGText.escape(title))</text>\n"
        svg += "<rect x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(width))\" height=\"\(f(height))\" fill=\"none\" stroke=\"#888\"/>\n"
        for tick in y.ticks {
            svg += "<line x1=\"\(f(left))\" x2=\"\(f(left + width))\" y1=\"\(f(py(tick)))\" y2=\"\(f(py(tick)))\" stroke=\"#eee\"/>\n"
            svg += "<text x=\"\(f(left - 4))\" y=\"\(f(py(tick) + 4))\" text-anchor=\"end\">\(Self.label(tick))</text>\n"
        }
        for tick in x.ticks {
            svg += "<line x1=\"\(f(px(tick)))\" x2=\"\(f(px(tick)))\" y1=\"\(f(top))\" y2=\"\(f(top + height))\" stroke=\"#eee\"/>\n"
            svg += "<text x=\"\(f(px(tick)))\" y=\"\(f(top + height + 14))\" text-anchor=\"middle\">\(Self.label(tick))</text>\n"
        }
        svg += "<text x=\"\(f(left + width / 2))\" y=\"\(f(top + height + 30))\" text-anchor=\"middle\">\(SVGText.escape(x.label))</text>\n"
        let middle = top + height / 2
        svg += "<text x=\"\(f(left - 42))\" y=\"\(f(middle))\" transform=\"rotate(-90 \(f(left - 42)) \(f(middle)))\" text-anchor=\"middle\">\(SVGText.escape(y.label))</text>\n"
        return svg
    }

    /// A line through `points` (value pairs, drawn in the order given) with a marker on each: filled circles, or
    /// hollow squares when `dashed`; `flagged` points get a red ring.
    func series(_ points: [(x: Double, y: Double, flagged: Bool)], color: String, dashed: Bool) -> String {
        let f = Self.format
        guard !points.isEmpty else { return "" }
        let path = points.map { "\(f(px($0.x))),\(f(py($0.y)))" }.joined(separator: " ")
        var svg = "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1.5\"\(dashed ? " stroke-dasharray=\"5,3\"" : "") points=\"\(path)\"/>\n"
        for point in points {
            let (cx, cy) = (px(point.x), py(point.y))
            svg += dashed
                ? "<rect x=\"\(f(cx - 3))\" y=\"\(f(cy - 3))\" width=\"6\" height=\"6\" fill=\"white\" stroke=\"\(color)\"/>"
                : "<circle cx=\"\(f(cx))\" cy=\"\(f(cy))\" r=\"3\" fill=\"\(color)\"/>"
            if point.flagged { svg += "<circle cx=\"\(f(cx))\" cy=\"\(f(cy))\" r=\"6\" fill=\"none\" stroke=\"#d62728\"/>" }
            svg += "\n"
        }
        return svg
    }

    static func format(_ value: Double) -> String { String(format: "%.1f", value) }

    /// A tick's value as text: 1k for thousands, no needless decimals.
    static func label(_ value: Double) -> String {
        if value >= 1000 { return String(format: value.truncatingRemainder(dividingBy: 1000) == 0 ? "%.0fk" : "%.1fk", value / 1000) }
        if value >= 10 || value == value.rounded() { return String(format: "%.0f", value) }
        return String(format: value >= 1 ? "%.1f" : "%.2f", value)
    }
}
