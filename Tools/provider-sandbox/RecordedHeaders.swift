import HTTPTypes

/// The request headers a delivery record keeps, by name in ascending order; several fields of one
/// name are joined with ", " in the order they came. Never `authorization`.
struct RecordedHeaders {
    private var fields: [(name: String, value: String)] = []

    /// The fields of `headers` whose lower-case name `keep` accepts.
    init(_ headers: HTTPFields, keeping keep: (String) -> Bool) {
        for field in headers {
            let name = field.name.canonicalName
            guard name != "authorization", keep(name) else { continue }
            // Few fields are kept, so an insertion sort it is.
            var index = fields.endIndex
            while index > fields.startIndex, name < fields[index - 1].name {
                index -= 1
            }
            if index > fields.startIndex, fields[index - 1].name == name {
                fields[index - 1].value += ", " + field.value
            } else {
                fields.insert((name, field.value), at: index)
            }
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
