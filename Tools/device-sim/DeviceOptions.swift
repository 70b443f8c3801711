import ArgumentParser
import Foundation
import NotifyClient
import NotifyModels

/// The options every subcommand shares: which service, app and user this device is, and where its cache lives.
struct DeviceOptions: ParsableArguments {
    @Option(help: "The ingest service.")
    var baseURL = "http://127.0.0.1:21080"

    @Option(help: "The app this device belongs to.")
    var appId: String

    @Option(help: "A user token (JWT) the app server minted. Alternatively pass --signing-key and --user-id.")
    var userToken: String?

    @Option(help: "The app's clientSigningKey, to mint user tokens here (with --user-id).")
    var signingKey: String?

    @Option(help: "The user this device belongs to (with --signing-key).")
    var userId: String?

    @Option(help: "This device's name (its subscription's displayName, and its default storage folder).")
    var name = "device"

    @Option(help: "The folder of this device's cache (default: <tmp>/device-sim/<name>).")
    var storage: String?

    func validate() throws {
        guard URL(string: baseURL)?.host != nil else { throw ValidationError("--base-url must be an http(s) URL") }
        if userToken == nil && (signingKey == nil || userId == nil) {
            throw ValidationError("pass --user-token, or --signing-key and --user-id")
        }
    }

    func makeClient() throws -> NotifyClient {
        let directory = storage.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appending(path: "device-sim").appending(path: name)
        let (fixedToken, key, user, app) = (userToken, signingKey, userId, appId)
        return try NotifyClient(
            configuration: .init(baseURL: URL(string: baseURL)!, appId: appId, storageDirectory: directory),
            tokenProvider: {
                if let fixedToken { return fixedToken }
                return try await UserToken.mint(userId: user ?? "", appId: app, signingKey: key ?? "")
            })
    }
}
