import HTTPTypes

/// The request headers a delivery record keeps, by name in ascending order; several fields of one
/// name are joined with ", " in the order they came. Never `authorization`.
struct RecordedHeaders {
    private var fields: [(name: String, value: String)] = []

    /// No headers yet: see `add(name:value:)`.
    init() {}

    /// The fields of `headers` whose lower-case name `keep` accepts.
    init(_ headers: HTTPFields, keeping keep: (String) -> Bool) {
        for field in headers {
            let name = field.name.canonicalName
            if keep(name) {
                add(name: name, value: field.value)
            }
        }
    }

    /// Keeps a field (`name` in lower case) unless it is `authorization`.
    mutating func add(name: String, value: String) {
        guard name != "authorization" else { return }
        // Few fields are kept, so an insertion sort it is.
        var index = fields.endIndex
        while index > fields.startIndex, name < fields[index - 1].name {
            index -= 1
        }
        if index > fields.startIndex, fields[index - 1].name == name {
            fields[index - 1].value += ", " + value
        } else {
            fields.insert((name, value), at: index)
        }
    }

    /// Appends the headers as a JSON object of strings.
    func appendJSON(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        for (index, field) in fields.enumerated() {
            if index > 0 {
                output.append(UInt8(ascii: ","))
            }
            JSONText.appendQuoted(field.name, to: &output)
            output.append(UInt8(ascii: ":"))
            JSONText.appendQuoted(field.value, to: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}
