import ArgumentParser

/// `notifyctl`: the command line of the service's operators and app developers.
struct NotifyCtlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifyctl",
        abstract: "Administer the notification service: apps, provider credentials, event sources, publishing, delivery logs, dead letters.",
        discussion: """
            Every command takes --url (env NOTIFY_URL, default http://127.0.0.1:21080), --admin-token \
            (env NOTIFY_ADMIN_TOKEN, default local-admin-token), --app (env NOTIFY_APP_ID), --api-key (env \
            NOTIFY_API_KEY) and --json (print the service's JSON answer as it came, for scripts, instead of \
            tables and lines). Operator commands (apps, providers) use the admin token; app-server commands \
            (event-sources, send, deliveries) the app's API key.

            Errors go to stderr as `error: <code>: <message> (field: <field>)`.
            Exit status:
              0   done
              1   the service or the broker refused the request (4xx; a batch with a refused item)
              3   the service or the broker is unavailable (5xx, no connection) or answered what notifyctl cannot read
              64  wrong usage (an unknown option, a missing or invalid value)

            Shell completion: notifyctl --generate-completion-script bash|zsh|fish
            """,
        subcommands: [
            AppsCommand.self, ProvidersCommand.self, APIKeysCommand.self, EventSourcesCommand.self, SendCommand.self, UserTokenCommand.self,
            DeliveriesCommand.self, TailCommand.self, DeadLetterCommand.self, SecretKeyCommand.self,
        ]
    )
}

/// The entry point: runs the command, and turns a `CommandFailure` into its `error:` line and exit status (the
/// argument parser reports wrong usage itself, with status 64).
@main
enum NotifyCtlEntryPoint {
    static func main() async {
        do {
            var command = try await NotifyCtlCommand.asyncParseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            if let answer = failure.answer { Output.answer(answer) }
            Output.error(failure.message)
            NotifyCtlCommand.exit(withError: ExitCode(failure.exitStatus))
        } catch {
            NotifyCtlCommand.exit(withError: error)
        }
    }
}
