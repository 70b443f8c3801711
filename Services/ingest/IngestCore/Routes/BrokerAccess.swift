import Foundation
import Logging
import NotifyModels
import NotifyStore

/// Gives apps their own RabbitMQ users without holding the broker's administration: ingest chooses a new user's name
/// and password and sends storage only RabbitMQ's hash of the password (`BrokerPasswordHash`); storage, which is not
/// exposed to the internet, creates the user with the least privilege an app server needs and marks it provisioned, and
/// ingest answers the credentials, once, after that. The password is kept nowhere (RabbitMQ keeps its own hash), and
/// is in no message ingest sends. Storage also deletes the users whose rotation overlap ended and those of deleted apps.
struct BrokerAccess: Sendable {
    /// Where app servers are told to connect (the broker's address as they reach it).
    struct PublicAddress: Sendable {
        var host: String
        var port: Int
        var virtualHost: String
    }

    /// A new user: what the operator is answered, and the record storage creates it from.
    struct IssuedUser: Sendable {
        var credentials: BrokerCredentials
        var record: BrokerUserRecord
    }

    let address: PublicAddress
    /// How long a rotated-out user stays accepted unless the request says otherwise.
    let defaultOverlap: TimeInterval
    let visibility: WriteVisibility
    let store: any AppStore
    let logger: Logger

    /// The answer when storage did not create a user within the wait: nothing the request sent stays (see `create`).
    static let unavailable = APIFailure(
        .serviceUnavailable, code: "broker_admin_unavailable",
        message: "the message broker's administration did not create the broker user in time; nothing was changed", retryAfterSeconds: 5)

    /// A new user for `appId` (a fresh name each time, so an old and a new one can live side by side).
    func issue(for appId: String, at now: Date) -> IssuedUser {
        let user = "\(appId).\(Self.randomName())"
        let password = OperatorRoutes.randomToken(bytes: 24)
        var url = URLComponents()
        (url.scheme, url.user, url.password, url.host, url.port) = ("amqp", user, password, address.host, address.port)
        url.percentEncodedPath = "/" + (address.virtualHost.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? address.virtualHost)
        return IssuedUser(
            credentials: BrokerCredentials(
                user: user, password: password, host: address.host, port: address.port, virtualHost: address.virtualHost, url: url.string ?? "",
                exchange: QueueNames.ingestExchange, routingKey: appId, replyQueuePrefix: "\(user).reply."),
            record: BrokerUserRecord(
                appId: appId, user: user, createdAt: now, retiresAt: nil, passwordHash: BrokerPasswordHash.sha256(of: password)))
    }

    /// Sends `commands` (the new user's record among them) in one message and returns once storage created `user` in
    /// RabbitMQ. When it did not within the wait, sends `undo` (which must retire the user, or delete its app) and
    /// throws `unavailable`: a user storage creates later is deleted at once, and its password was never answered.
    func create(_ user: String, sending commands: [StorageCommand], undo: [StorageCommand]) async throws(APIFailure) {
        let created = try await visibility.send(commands, thenAwait: { [store] in try await store.isProvisioned(brokerUser: user) ? true : nil })
        guard created == nil else { return }
        logger.error("storage did not create a broker user in time (is its management API reachable?); the request is undone", metadata: ["user": "\(user)"])
        do {
            try await visibility.sender.send(undo)
        } catch {
            logger.error("could not undo a broker user storage did not create; it cannot be used (its password was not answered)", metadata: ["user": "\(user)"])
        }
        throw Self.unavailable
    }

    /// Eight lowercase letters and digits.
    private static func randomName() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<8).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
