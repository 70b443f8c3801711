import Foundation
import Logging
import NotifyBrokerAdmin
import NotifyModels

/// Gives apps their own RabbitMQ users, through the broker's administration: created with the least privilege an app
/// server needs (`BrokerPermissions.appPublisher`), their password answered once and never stored (RabbitMQ keeps only
/// its hash), and deleted with the app or when a rotation's overlap ends.
struct BrokerAccess: Sendable {
    /// Where app servers are told to connect (the broker's address as they reach it).
    struct PublicAddress: Sendable {
        var host: String
        var port: Int
        var virtualHost: String
    }

    let administration: any BrokerAdministration
    let address: PublicAddress
    /// How long a rotated-out user stays accepted unless the request says otherwise.
    let defaultOverlap: TimeInterval
    let logger: Logger

    /// Creates a new user for `appId` (a fresh name each time, so an old and a new one can live side by side).
    func createUser(for appId: String) async throws(APIFailure) -> BrokerCredentials {
        let user = "\(appId).\(Self.randomName())"
        let password = OperatorRoutes.randomToken(bytes: 24)
        do {
            try await administration.putUser(user, password: password)
            try await administration.putPermissions(.appPublisher(user: user, exchange: QueueNames.ingestExchange), of: user)
        } catch {
            try? await administration.deleteUser(user)
            throw unavailable(error)
        }
        var url = URLComponents()
        (url.scheme, url.user, url.password, url.host, url.port) = ("amqp", user, password, address.host, address.port)
        url.percentEncodedPath = "/" + (address.virtualHost.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? address.virtualHost)
        return BrokerCredentials(
            user: user, password: password, host: address.host, port: address.port, virtualHost: address.virtualHost, url: url.string ?? "",
            exchange: QueueNames.ingestExchange, routingKey: appId, replyQueuePrefix: "\(user).reply.")
    }

    /// Deletes `user` from the broker (its connections close); succeeds when it is already gone.
    func deleteUser(_ user: String) async throws(APIFailure) {
        do {
            try await administration.deleteUser(user)
        } catch {
            throw unavailable(error)
        }
    }

    private func unavailable(_ error: BrokerAdminError) -> APIFailure {
        logger.error("the broker's management API failed", metadata: ["error": "\(error)"])
        return APIFailure(
            .serviceUnavailable, code: "broker_admin_unavailable",
            message: "the message broker's administration could not be reached; nothing was changed", retryAfterSeconds: 5)
    }

    /// Eight lowercase letters and digits.
    private static func randomName() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<8).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
