import NotifyDatabase

extension ServiceEnvironment {
    /// The PostgreSQL URL in `variable`, checked now: one that names no database fails at start-up with an error naming
    /// the variable and what is wrong, never the URL (it holds a password).
    public func requireDatabaseURL(_ variable: EnvironmentVariable) throws(ConfigurationError) -> String {
        try checkedDatabaseURL(try require(variable), in: variable)
    }

    /// The same for a variable that may be unset (nil).
    public func databaseURL(_ variable: EnvironmentVariable) throws(ConfigurationError) -> String? {
        guard let url = string(variable) else { return nil }
        return try checkedDatabaseURL(url, in: variable)
    }

    private func checkedDatabaseURL(_ url: String, in variable: EnvironmentVariable) throws(ConfigurationError) -> String {
        do {
            _ = try DatabaseURL.clientConfiguration(url)
        } catch {
            throw ConfigurationError("\(variable.name): \(error)")
        }
        return url
    }
}
