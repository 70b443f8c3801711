import Synchronization

/// Ids for messages published without one (they name a returned message in logs): a random prefix per process
/// and a counter. Unique without asking the system for randomness per message, as Foundation's `UUID()` does
/// (it opens /dev/urandom on every call on Linux).
enum PublishedMessageID {
    private static let processPrefix = String(UInt64.random(in: .min ... .max), radix: 16)
    private static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        "\(processPrefix)-\(counter.wrappingAdd(1, ordering: .relaxed).newValue)"
    }
}
