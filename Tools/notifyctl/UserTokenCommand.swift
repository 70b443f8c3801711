import ArgumentParser
import Foundation
import NotifyModels

/// `notifyctl user-token`: a user token, as an app's server mints them for its devices.
struct UserTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user-token",
        abstract: "Mint a user token: an HS256 JWT (sub = the user, aud = the app) signed with the app's client signing key.",
        discussion: "Prints the token alone (also with --json). The app is --app; the key is the clientSigningKey apps create printed."
    )

    @OptionGroup var options: ServiceOptions

    @Option(help: "The user's id (the token's sub).")
    var user: String

    // A base64url key begins with "-" one time in 64: it is the value, not an option.
    @Option(parsing: .unconditional, help: "The app's clientSigningKey.")
    var signingKey: String

    @Option(help: "Seconds the token is valid.")
    var lifetime = 3600

    func validate() throws {
        guard lifetime > 0 else { throw UsageError("--lifetime must be a positive number of seconds") }
    }

    func run() async throws {
        Output.line(try await UserToken.mint(userId: user, appId: try options.appId(), signingKey: signingKey, lifetime: TimeInterval(lifetime)))
    }
}
