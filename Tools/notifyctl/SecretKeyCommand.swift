import ArgumentParser
import NotifyModels

/// `notifyctl secret-key`: a new key-encryption key entry for NOTIFY_SECRET_KEYS or its file.
struct SecretKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-key",
        abstract: "Print a new random key-encryption key, id:base64, for NOTIFY_SECRET_KEYS or NOTIFY_SECRET_KEYS_FILE.",
        discussion: """
            ingest, storage and push-dispatch seal stored secrets with the first key and open them with any. To rotate \
            without downtime: add the new entry second on every service and restart them, then move it first and \
            restart them again; storage re-seals what the old key sealed (notify_secrets_on_retired_keys reaches 0), \
            after which the old entry can be removed.
            """
    )

    @Option(help: "The key's id (1 to 32 letters, digits, '-' or '_'), stored with every secret it seals.")
    var id: String

    func validate() throws {
        guard !id.isEmpty, id.count <= 32, id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw ValidationError("--id must be 1 to 32 letters, digits, '-' or '_'")
        }
    }

    func run() {
        print(SecretKeyring.generateEntry(id: id))
    }
}
