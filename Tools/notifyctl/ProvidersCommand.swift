import ArgumentParser
import Crypto
import Foundation
import NotifyModels

/// `notifyctl providers`: an app's push provider credentials (admin token).
struct ProvidersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "providers",
        abstract: "Store an app's push provider credentials (admin token; the app is --app).",
        subcommands: [SetProviderCommand.self]
    )
}

/// `providers set`: one subcommand per provider, each with its credentials' options.
struct SetProviderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Store the app's credentials for one provider; prints them as stored (never a secret).",
        discussion: "Keys are checked by the service when stored: a broken one is refused naming the field.",
        subcommands: [SetAPNsCommand.self, SetFCMCommand.self, SetWNSCommand.self, SetWebPushCommand.self]
    )
}

/// `providers set apns`: a token-based (.p8) APNs key.
struct SetAPNsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns", abstract: "APNs: a .p8 key (also used for the app's VoIP pushes).")

    @OptionGroup var options: ServiceOptions
    @OptionGroup var identity: AppIdentityOption

    @Option(help: "The .p8 key file Apple issued (PKCS#8 PEM, P-256).")
    var p8: String

    @Option(help: "The key's 10-character id.")
    var keyId: String

    @Option(help: "The 10-character Apple team id.")
    var teamId: String

    @Option(help: "The app's bundle id, sent as apns-topic.")
    var topic: String

    @Option(help: "sandbox or production.")
    var environment: APNsCredentials.Environment = .production

    @Option(help: "Another APNs host, an https URL (e.g. the provider sandbox's).")
    var endpoint: String?

    func run() async throws {
        let credentials = APNsCredentials(
            teamId: teamId, keyId: keyId, privateKey: try InputFile.text(p8, option: "--p8"), topic: topic, environment: environment,
            endpoint: endpoint)
        try await storeProviderCredentials("apns", credentials, options: options, identity: identity)
    }
}

/// `providers set fcm`: a Google service account.
struct SetFCMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fcm", abstract: "FCM HTTP v1: a Google service-account JSON file.")

    @OptionGroup var options: ServiceOptions
    @OptionGroup var identity: AppIdentityOption

    @Option(help: "The service-account JSON file Google lets you download.")
    var serviceAccount: String

    @Option(help: "Another FCM host than https://fcm.googleapis.com, an https URL (e.g. the provider sandbox's).")
    var endpoint: String?

    private struct Credentials: Encodable {
        var serviceAccount: JSONValue
        var endpoint: String?
    }

    func run() async throws {
        let file = try InputFile.data(serviceAccount, option: "--service-account")
        guard let account = try? JSONDecoder().decode(JSONValue.self, from: file), case .object = account else {
            throw UsageError("--service-account: \(serviceAccount) is not a JSON object")
        }
        try await storeProviderCredentials("fcm", Credentials(serviceAccount: account, endpoint: endpoint), options: options, identity: identity)
    }
}

/// `providers set wns`: the Windows package's credentials.
struct SetWNSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "wns", abstract: "WNS: the package SID and client secret.")

    @OptionGroup var options: ServiceOptions
    @OptionGroup var identity: AppIdentityOption

    @Option(help: "The package SID (ms-app://...).")
    var packageSid: String

    // A secret may begin with "-": the word after the option is its value.
    @Option(parsing: .unconditional, help: "The client secret.")
    var secret: String

    func run() async throws {
        try await storeProviderCredentials("wns", WNSCredentials(packageSid: packageSid, clientSecret: secret, tokenURL: nil), options: options, identity: identity)
    }
}

/// `providers set webpush`: a VAPID key, given or made here.
struct SetWebPushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webpush",
        abstract: "Web Push: a VAPID key (a P-256 PEM file, or one generated here) and a contact.",
        discussion: """
            Prints the VAPID public key (base64url): the applicationServerKey browsers subscribe with. Browsers' \
            subscriptions are bound to that key, so storing another one later means every browser subscribes again: \
            with --generate-vapid, keep the new private key with --save-key.
            """
    )

    @OptionGroup var options: ServiceOptions
    @OptionGroup var identity: AppIdentityOption

    @Option(help: "The VAPID private key file (PKCS#8 PEM, P-256).")
    var vapidKey: String?

    @Flag(help: "Generate a new P-256 VAPID key instead of reading one.")
    var generateVapid = false

    @Option(help: "With --generate-vapid: write the new private key to this new file (PEM, readable by you only).")
    var saveKey: String?

    @Option(help: "A mailto: or https: contact the push services may use.")
    var subject: String

    private struct Credentials: Encodable {
        var vapidPrivateKey: String
        var subject: String
    }

    func validate() throws {
        guard (vapidKey != nil) != generateVapid else { throw UsageError("give either --vapid-key FILE or --generate-vapid") }
        if saveKey != nil && !generateVapid { throw UsageError("--save-key saves a key made by --generate-vapid") }
    }

    func run() async throws {
        let privateKey: String
        if let vapidKey {
            privateKey = try InputFile.text(vapidKey, option: "--vapid-key")
        } else {
            privateKey = P256.Signing.PrivateKey().pemRepresentation
            if let saveKey { try save(privateKey, to: saveKey) }
        }
        try await storeProviderCredentials("webpush", Credentials(vapidPrivateKey: privateKey, subject: subject), options: options, identity: identity)
    }

    /// Writes the key to a new file only its owner may read, before it is sent: a key that could not be kept is not stored.
    private func save(_ pem: String, to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else { throw UsageError("--save-key: \(path) exists; give a new file") }
        guard FileManager.default.createFile(atPath: path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw UsageError("--save-key: cannot write \(path)")
        }
    }
}

/// `--app-package`: which of the app's identities the credentials are for.
struct AppIdentityOption: ParsableArguments {
    @Option(help: "For the app identity whose devices register with this appPackage (say, a watch app); default: every other device.")
    var appPackage: String?
}

/// `PUT /v1/apps/{appId}/providers/{provider}` with `credentials`, printing what was stored.
private func storeProviderCredentials(
    _ provider: String, _ credentials: some Encodable, options: ServiceOptions, identity: AppIdentityOption
) async throws {
    let query = identity.appPackage.map { "?appPackage=\(ServiceClient.escaped($0))" } ?? ""
    let answer = try await options.client.call(
        .PUT, "/v1/apps/\(ServiceClient.escaped(try options.appId()))/providers/\(provider)\(query)", bearer: options.operatorToken,
        json: credentials)
    try options.present(answer, as: StoredProvider.self) { stored in
        var fields = FieldList()
        fields.add("appId", stored.appId)
        fields.add("provider", stored.provider.rawValue)
        fields.add("appPackage", stored.appPackage)
        fields.add("teamId", stored.teamId)
        fields.add("keyId", stored.keyId)
        fields.add("topic", stored.topic)
        fields.add("environment", stored.environment)
        fields.add("endpoint", stored.endpoint)
        fields.add("projectId", stored.projectId)
        fields.add("clientEmail", stored.clientEmail)
        fields.add("packageSid", stored.packageSid)
        fields.add("subject", stored.subject)
        fields.add("vapidPublicKey", stored.vapidPublicKey.map { "\($0)  (the browsers' applicationServerKey)" })
        fields.print()
    }
}
