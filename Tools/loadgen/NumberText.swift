/// Numbers as the reports write them.
enum NumberText {
    /// `value` rounded, with thousands separated by commas: 45,000.
    static func grouped(_ value: Double) -> String {
        var digits = String(Int(value.rounded()).magnitude)
        var groups: [Substring] = []
        while digits.count > 3 {
            groups.insert(digits.suffix(3), at: 0)
            digits.removeLast(3)
        }
        groups.insert(Substring(digits), at: 0)
        return (value.rounded() < 0 ? "-" : "") + groups.joined(separator: ",")
    }

    static func grouped(_ value: Int) -> String { grouped(Double(value)) }
}
