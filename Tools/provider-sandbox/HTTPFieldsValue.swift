import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, joined with ", " when there are several; nil if there
    /// are none. The same answer as `self[name]` for any name but `Cookie` (which that joins with
    /// "; "), at a tenth of the cost: the subscript runs through unspecialized generic code, which
    /// shows when every push reads several headers.
    func value(of name: HTTPField.Name) -> String? {
        var value: String?
        for field in self where field.name == name {
            value = value.map { $0 + ", " + field.value } ?? field.value
        }
        return value
    }
}
