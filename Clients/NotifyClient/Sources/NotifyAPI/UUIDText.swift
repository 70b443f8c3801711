import Foundation

extension UUID {
    /// Appends the 8-4-4-4-12 string form (`uuidString`, or its lowercase) without formatting a String
    /// (every push job has five: two in its push id, three in its JSON).
    @inlinable public func appendString(to bytes: inout [UInt8], uppercase: Bool) {
        withString(uppercase: uppercase) { bytes.append(contentsOf: $0) }
    }

    /// Calls `body` with the 36 characters of the 8-4-4-4-12 string form, written on the stack.
    @inlinable public func withString<Result>(uppercase: Bool, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        // A nibble of 10 or more is a letter: 'a' or 'A' less 10, which is '0' plus this.
        let letterShift: UInt8 = uppercase ? 7 : 39
        var text: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)  // 40 bytes: room for 36
        return try withUnsafeMutableBytes(of: &text) { characters in
            withUnsafeBytes(of: uuid) { raw in
                for index in 0..<16 {
                    let byte = raw[index]
                    let high = byte >> 4
                    let low = byte & 0xF
                    // Bytes 4, 6, 8 and 10 each start a group after a dash.
                    let dashes = (index >= 4 ? 1 : 0) + (index >= 6 ? 1 : 0) + (index >= 8 ? 1 : 0) + (index >= 10 ? 1 : 0)
                    let position = 2 * index + dashes
                    characters[position] = high &+ 48 &+ (high > 9 ? letterShift : 0)
                    characters[position + 1] = low &+ 48 &+ (low > 9 ? letterShift : 0)
                }
            }
            characters[8] = UInt8(ascii: "-")
            characters[13] = UInt8(ascii: "-")
            characters[18] = UInt8(ascii: "-")
            characters[23] = UInt8(ascii: "-")
            return try body(UnsafeRawBufferPointer(rebasing: characters[..<36]))
        }
    }

    /// `uuidString.lowercased()` (the form of every id on the wire and in provider headers), without `snprintf`.
    public var lowercasedString: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(36)
        appendString(to: &bytes, uppercase: false)
        return String(decoding: bytes, as: UTF8.self)
    }
}
