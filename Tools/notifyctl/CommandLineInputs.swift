import ArgumentParser
import Foundation
import NotifyModels

// What commands take from the command line beyond plain text: the API's enumerations as option values, by their JSON
// names (`--badge-mode unreadIncludingBroadcasts`), and the files options name.

extension BadgeMode: @retroactive ExpressibleByArgument {}
extension EventSourcePolicy: @retroactive ExpressibleByArgument {}
extension APIKeyScope: @retroactive ExpressibleByArgument {}
extension APNsCredentials.Environment: ExpressibleByArgument {}

/// Files named by options (keys, service accounts, publish bodies), read whole; one that cannot be read is wrong usage.
enum InputFile {
    static func data(_ path: String, option: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw UsageError("\(option): cannot read \(path): \(error.localizedDescription)")
        }
    }

    static func text(_ path: String, option: String) throws -> String {
        String(decoding: try data(path, option: option), as: UTF8.self)
    }
}
