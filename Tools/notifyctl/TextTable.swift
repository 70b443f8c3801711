/// Rows of text in aligned columns, for people: a header row, then one row per item, each column as wide as its
/// widest cell (no spaces at the end of a line).
struct TextTable {
    private var rows: [[String]]

    init(_ headers: [String]) {
        rows = [headers]
    }

    init(_ headers: String...) {
        self.init(headers)
    }

    mutating func add(_ cells: [String]) {
        rows.append(cells)
    }

    mutating func add(_ cells: String...) {
        add(cells)
    }

    func print() {
        let widths = rows.reduce(into: [Int]()) { widths, row in
            for (column, cell) in row.enumerated() {
                if column == widths.count { widths.append(0) }
                widths[column] = max(widths[column], cell.count)
            }
        }
        for row in rows {
            var line = row.enumerated().map { column, cell in padded(cell, to: widths[column]) }.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            Output.line(line)
        }
    }
}

/// Named values, one a line with the values aligned: an app as created, credentials as stored, one event source.
struct FieldList {
    private var fields: [(name: String, value: String)] = []

    /// Adds a field; an absent value is left out.
    mutating func add(_ name: String, _ value: String?) {
        if let value { fields.append((name, value)) }
    }

    func print() {
        let width = fields.map(\.name.count).max() ?? 0
        for field in fields {
            Output.line(padded(field.name, to: width) + "  " + field.value)
        }
    }
}

/// `text` followed by spaces up to `width` characters.
private func padded(_ text: String, to width: Int) -> String {
    text + String(repeating: " ", count: max(width - text.count, 0))
}
