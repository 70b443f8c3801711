import NotifyAMQP

extension ServiceEnvironment {
    /// The broker configuration from NOTIFY_AMQP_URL.
    public func amqpConfiguration() throws(ConfigurationError) -> AMQPConfiguration {
        let url = try require(.amqpURL)
        do {
            return try AMQPConfiguration(url: url)
        } catch {
            throw ConfigurationError("NOTIFY_AMQP_URL: \(error.message)")
        }
    }
}
