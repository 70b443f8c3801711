import Crypto
import Foundation

/// The advisory lock keys of the poll leases, 64 bits each (`pg_try_advisory_lock(bigint)`).
public enum PollLeaseKeys {
    /// Held in shared mode by every instance whose lease session is up: their number is the pollers' count.
    public static let presence = key("notify.poll.pollers")

    /// The lease of an app's poll source: the first 8 bytes of SHA-256 over its app id and name.
    public static func source(appId: String, name: String) -> Int64 {
        key("notify.poll.source\u{0}\(appId)\u{0}\(name)")
    }

    private static func key(_ text: String) -> Int64 {
        Int64(bitPattern: SHA256.hash(data: Data(text.utf8)).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// The key `pg_locks` shows for an advisory lock taken with one bigint: its high half in classid, low in objid.
    public static func key(classid: Int64, objid: Int64) -> Int64 {
        Int64(bitPattern: UInt64(UInt32(truncatingIfNeeded: classid)) << 32 | UInt64(UInt32(truncatingIfNeeded: objid)))
    }
}
