import PostgresNIO

extension PostgresBindings {
    /// The values of a prepared statement's parameters, `$1` first.
    public init(_ values: any PostgresDynamicTypeEncodable...) {
        self.init(capacity: values.count)
        for value in values { append(value) }
    }
}
