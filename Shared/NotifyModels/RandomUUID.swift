import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's generator. On Linux, Foundation's `UUID()` opens, reads and
    /// closes /dev/urandom on every call, which was 15 % of ingest's CPU when done for every notification.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high: UInt64 = (generator.next() & ~0xF000) | 0x4000
        let low: UInt64 = (generator.next() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        return withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { bytes in
            UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                        bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        }
    }
}
