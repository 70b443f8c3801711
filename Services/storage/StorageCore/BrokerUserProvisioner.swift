import Foundation
import Logging
import NotifyBrokerAdmin
import NotifyDatabase
import NotifyModels
import NotifyRuntime
import NotifyStore
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Creates apps' broker users in RabbitMQ and deletes them, through the management API, so that no process exposed to
/// the internet holds the broker's administrator: ingest records a new user with its password's hash (`putBrokerUser`;
/// the password itself is answered to the operator once and sent nowhere), and this creates it with the least
/// privilege an app server needs (`BrokerPermissions.appPublisher`) and marks it provisioned, which ingest waits for
/// before it answers the credentials. Users whose rotation overlap ended, and the users of deleted apps (retired with
/// them), are deleted from RabbitMQ, then forgotten.
///
/// It runs beside the command consumer, never in it: a management API that is slow or down holds up no command batch.
/// `RegistryWriter` announces work on `StoreChannel.brokerUsers` when its transaction commits, and the provisioner sleeps until then;
/// it still looks every `interval` (for overlaps that ended), and every second while it cannot listen or the
/// management API fails. Several storage instances may run it at once: every step is idempotent, and a user created
/// after its row was deleted (retired meanwhile) is deleted again.
final class BrokerUserProvisioner: Service {

    private let client: PostgresClient
    private let store: BrokerUserStore
    private let administration: any BrokerAdministration
    private let interval: Duration
    private let logger: Logger
    private let retryInterval: Duration = .seconds(1)
    private let pageSize = 100
    private let announced = AnnouncedWork()

    init(client: PostgresClient, administration: any BrokerAdministration, interval: Duration, logger: Logger) {
        self.client = client
        self.store = BrokerUserStore(client: client, logger: logger)
        self.administration = administration
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listen() }
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                let created = await createPendingUsers()
                let deleted = await deleteRetiredUsers()
                // A full page: there may be more at once.
                if created == pageSize || deleted == pageSize { continue }
                let failed = created == nil || deleted == nil
                await announced.pause(upTo: failed || !announced.isListening ? retryInterval : interval)
            }
            group.cancelAll()
        }
    }

    /// Listens for announced work until cancelled.
    private func listen() async {
        await announced.listen(on: StoreChannel.brokerUsers, client: client, what: "broker users to create", logger: logger)
    }

    /// Creates the users recorded but not yet in RabbitMQ (one page), oldest first; answers how many, nil on a failure.
    private func createPendingUsers() async -> Int? {
        do {
            let pending = try await store.pending(limit: pageSize)
            for user in pending {
                try await administration.putUser(user.user, passwordHash: user.passwordHash)
                try await administration.putPermissions(.appPublisher(user: user.user, exchange: QueueNames.ingestExchange), of: user.user)
                if try await store.markProvisioned(user.user) {
                    logger.info("created a broker user", metadata: ["user": "\(user.user)", "appId": "\(user.appId)"])
                } else {
                    // Retired and deleted while it was being created (its request gave up, or its app was deleted).
                    try await administration.deleteUser(user.user)
                }
            }
            return pending.count
        } catch {
            logger.warning("could not create broker users; will try again", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Deletes the users whose retirement came (one page) from RabbitMQ, then their rows; answers how many, nil on a failure.
    private func deleteRetiredUsers() async -> Int? {
        do {
            let retired = try await store.retired(limit: pageSize)
            for (user, appId) in retired {
                try await administration.deleteUser(user)
                try await store.forgetRetired(user)
                logger.info("deleted a retired broker user", metadata: ["user": "\(user)", "appId": "\(appId)"])
            }
            return retired.count
        } catch {
            logger.warning("could not delete retired broker users; will try again", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
