/// The PostgreSQL channels on which the store's writes announce work at commit (`pg_notify`), so that listeners wake
/// at once instead of polling.
public enum StoreChannel {
    /// Webhook events were recorded in the outbox (`WebhookOutbox`); storage's relay listens.
    public static let webhookEvents = "notify_webhook_events"
    /// A broker user was recorded or retired (`RegistryWriter`); storage's provisioner listens.
    public static let brokerUsers = "notify_broker_users"
}
