import ArgumentParser
import NotifyModels

/// `notifyctl apps`: the operator's calls on apps (admin token).
struct AppsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List, show and create apps, change their settings, rotate their keys and broker credentials, delete them (admin token).",
        subcommands: [ListAppsCommand.self, ShowAppCommand.self, CreateAppCommand.self, SetAppCommand.self, RotateKeyCommand.self, RotateBrokerCommand.self, DeleteAppCommand.self]
    )
}

/// `apps create`: a new app, its secrets printed this once.
struct CreateAppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create an app; prints its appId, apiKey, clientSigningKey and broker credentials, once.",
        discussion: """
            The API key is stored only as a hash and the broker password not at all: keep them. \
            The client signing key signs the app's user tokens (see user-token).
            """
    )

    @OptionGroup var options: ServiceOptions

    @Option(help: "The app's name (1 to 200 bytes).")
    var name: String

    @Flag(help: "Also create the app's RabbitMQ user, so that its servers can publish over AMQP.")
    var brokerAccess = false

    @Option(help: "What the badge of the app's pushes shows: unread (the default), unreadGroups, external, none, or unread, unreadGroups or external + IncludingBroadcasts.")
    var badgeMode: BadgeMode?

    private struct Request: Encodable {
        var name: String
        var brokerAccess: Bool?
        var badgeMode: BadgeMode?
    }

    func run() async throws {
        let answer = try await options.client.call(
            .POST, "/v1/apps", bearer: options.operatorToken,
            json: Request(name: name, brokerAccess: brokerAccess ? true : nil, badgeMode: badgeMode))
        try options.present(answer, as: CreatedApp.self) { app in
            var fields = FieldList()
            fields.add("appId", app.appId)
            fields.add("name", app.name)
            fields.add("apiKey", app.apiKey)
            fields.add("clientSigningKey", app.clientSigningKey)
            fields.add("badgeMode", app.badgeMode.rawValue)
            if let broker = app.broker { fields.add(broker) }
            fields.print()
        }
    }
}

/// `apps set`: changes an app's settings.
struct SetAppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Change an app's settings: its badge mode, its publish rate limits (per ingest instance), the identity provider whose tokens it takes.")

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The app's id.")
    var appId: String

    @Option(help: "What the badge of the app's pushes shows: unread, unreadGroups, external, none, or unread, unreadGroups or external + IncludingBroadcasts.")
    var badgeMode: BadgeMode?

    @Option(help: "Publish requests per second the app may make to each ingest instance (1 to 1000000).")
    var requestsPerSecond: Int?

    @Option(help: "Notifications per second the app may publish to each ingest instance (1 to 1000000).")
    var notificationsPerSecond: Int?

    @Option(help: "The OpenID Connect issuer (https URL) whose RS256/ES256 ID tokens are user tokens of the app; needs --identity-audience.")
    var identityIssuer: String?

    @Option(help: "What those tokens' aud must contain: the app's client id at the identity provider.")
    var identityAudience: String?

    @Option(help: "The identity provider's key set (JWKS, https URL), read instead of the issuer's discovery document.")
    var identityJwksUrl: String?

    @Option(help: "The claim holding the user id (default sub).")
    var identityUserIdClaim: String?

    @Flag(help: "Take no identity provider's tokens any more (only the app's own HS256 ones).")
    var removeIdentityProvider = false

    func validate() throws {
        let identity = identityIssuer != nil || identityAudience != nil || identityJwksUrl != nil || identityUserIdClaim != nil
        guard badgeMode != nil || requestsPerSecond != nil || notificationsPerSecond != nil || identity || removeIdentityProvider else {
            throw ValidationError(
                "name a setting: --badge-mode, --requests-per-second, --notifications-per-second, --identity-issuer or --remove-identity-provider")
        }
        if identity && (identityIssuer == nil || identityAudience == nil) {
            throw ValidationError("an identity provider needs --identity-issuer and --identity-audience")
        }
        if identity && removeIdentityProvider {
            throw ValidationError("--remove-identity-provider goes without the --identity-* options")
        }
    }

    func run() async throws {
        let limit = requestsPerSecond == nil && notificationsPerSecond == nil
            ? nil : RateLimit(requestsPerSecond: requestsPerSecond, notificationsPerSecond: notificationsPerSecond)
        var identityProvider: IdentityProvider?? = removeIdentityProvider ? .some(nil) : nil
        if let identityIssuer, let identityAudience {
            identityProvider = IdentityProvider(
                issuer: identityIssuer, jwksUrl: identityJwksUrl, audience: identityAudience,
                userIdClaim: identityUserIdClaim ?? IdentityProvider.defaultUserIdClaim)
        }
        let answer = try await options.client.call(
            .PATCH, "/v1/apps/\(ServiceClient.escaped(appId))", bearer: options.operatorToken,
            json: AppSettings(badgeMode: badgeMode, rateLimit: limit, identityProvider: identityProvider))
        try options.present(answer, as: AppSettings.self) { settings in
            var fields = FieldList()
            fields.add("appId", appId)
            fields.add("badgeMode", settings.badgeMode?.rawValue ?? "-")
            fields.add("requestsPerSecond", settings.rateLimit?.requestsPerSecond.map(String.init) ?? "the service's default")
            fields.add("notificationsPerSecond", settings.rateLimit?.notificationsPerSecond.map(String.init) ?? "the service's default")
            fields.add(identityProvider: settings.identityProvider ?? nil)
            fields.print()
        }
    }
}

/// `apps rotate-key`: a new API key or client signing key for an app.
struct RotateKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-key",
        abstract: "Replace an app's API key or client signing key; prints the new one once. The replaced one stays accepted for the overlap."
    )

    enum Key: String, ExpressibleByArgument, CaseIterable {
        case apiKey = "api-key"
        case clientSigningKey = "client-signing-key"
    }

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The app's id.")
    var appId: String

    @Argument(help: "Which key: api-key or client-signing-key.")
    var key: Key

    @Option(help: "How long the replaced key stays accepted, 0 to 2592000 (default: the service's, a day).")
    var overlapSeconds: Int?

    private struct Request: Encodable {
        var overlapSeconds: Int
    }

    func run() async throws {
        let answer = try await options.client.call(
            .POST, "/v1/apps/\(ServiceClient.escaped(appId))/\(key.rawValue)", bearer: options.operatorToken,
            body: try overlapSeconds.map { try ServiceClient.encode(Request(overlapSeconds: $0)) })
        try options.present(answer, as: RotatedAppKey.self) { rotated in
            var fields = FieldList()
            if let apiKey = rotated.apiKey { fields.add("api key", apiKey) }
            if let signingKey = rotated.clientSigningKey { fields.add("client signing key", signingKey) }
            fields.add("previous key accepted until", WireCoding.formatTimestamp(rotated.previousKeyRetiresAt))
            fields.print()
        }
    }
}

/// `apps rotate-broker`: a new broker user for an app.
struct RotateBrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-broker",
        abstract: "Create a new broker user for an app; prints its credentials once. The current users retire after the overlap."
    )

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The app's id.")
    var appId: String

    @Option(help: "How long the app's current broker users stay accepted, 0 to 2592000 (default: the service's, a day).")
    var overlapSeconds: Int?

    private struct Request: Encodable {
        var overlapSeconds: Int
    }

    func run() async throws {
        let answer = try await options.client.call(
            .POST, "/v1/apps/\(ServiceClient.escaped(appId))/broker-credentials", bearer: options.operatorToken,
            body: try overlapSeconds.map { try ServiceClient.encode(Request(overlapSeconds: $0)) })
        try options.present(answer, as: RotatedBrokerCredentials.self) { rotated in
            var fields = FieldList()
            fields.add(rotated.broker)
            for retiring in rotated.retiring {
                fields.add("retiring", "\(retiring.user) until \(WireCoding.formatTimestamp(retiring.retiresAt))")
            }
            fields.print()
        }
    }
}

/// `apps delete`: an app, its broker users and everything stored for it.
struct DeleteAppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete an app, its broker users and everything stored for it.")

    @OptionGroup var options: ServiceOptions

    @Argument(help: "The app's id.")
    var appId: String

    func run() async throws {
        let answer = try await options.client.call(.DELETE, "/v1/apps/\(ServiceClient.escaped(appId))", bearer: options.operatorToken)
        guard !options.json else { return }
        // 202: the broker confirmed the deletion, which storage had not yet applied when ingest answered.
        Output.line(answer.status == 202 ? "accepted the deletion of \(appId)" : "deleted \(appId)")
    }
}

extension FieldList {
    /// An app's broker user, as `apps create --broker-access` and `apps rotate-broker` answer it (once).
    mutating func add(_ broker: BrokerCredentials) {
        add("broker user", broker.user)
        add("broker password", broker.password)
        add("broker url", broker.url)
        add("broker exchange", broker.exchange)
        add("broker routingKey", broker.routingKey)
        add("broker replyQueuePrefix", broker.replyQueuePrefix)
    }

    /// The identity provider whose tokens an app takes, as `apps set` and `apps show` print it ("none" without one).
    mutating func add(identityProvider: IdentityProvider?) {
        guard let identityProvider else {
            add("identityProvider", "none")
            return
        }
        add("identityProvider issuer", identityProvider.issuer)
        add("identityProvider jwksUrl", identityProvider.jwksUrl ?? "from the issuer's discovery document")
        add("identityProvider audience", identityProvider.audience)
        add("identityProvider userIdClaim", identityProvider.userIdClaim)
    }
}
