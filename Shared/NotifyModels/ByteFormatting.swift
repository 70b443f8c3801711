import Foundation

extension UUID {
    private static let lowercaseHex: [UInt8] = Array("0123456789abcdef".utf8)
    private static let uppercaseHex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Appends the 8-4-4-4-12 string form (`uuidString`, or its lowercase) without formatting a String.
    func appendString(to bytes: inout [UInt8], uppercase: Bool) {
        let digits = uppercase ? Self.uppercaseHex : Self.lowercaseHex
        withUnsafeBytes(of: uuid) { raw in
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { bytes.append(UInt8(ascii: "-")) }
                bytes.append(digits[Int(byte >> 4)])
                bytes.append(digits[Int(byte & 0xF)])
            }
        }
    }
}

extension Int64 {
    /// Appends the decimal digits (what `String(self)` gives) without making a String.
    func appendDecimal(to bytes: inout [UInt8]) {
        if self < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = self.magnitude
        var reversed: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64's 20 digits
        var count = 0
        withUnsafeMutableBytes(of: &reversed) { digits in
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(digits[index]) }
        }
    }
}
