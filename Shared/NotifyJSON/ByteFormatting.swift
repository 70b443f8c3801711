import Foundation

/// Hexadecimal digits, for text written byte by byte.
@usableFromInline enum HexDigits {
    @usableFromInline static let lowercase: [UInt8] = Array("0123456789abcdef".utf8)
}

extension UInt8 {
    /// The value of this byte as an ASCII hexadecimal digit (0-9, a-f, A-F); nil for any other byte.
    public var hexDigitValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Int64 {
    /// Appends the decimal digits (what `String(self)` gives) without making a String.
    @inlinable public func appendDecimal(to bytes: inout [UInt8]) {
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

extension Sequence<UInt8> {
    /// Two lowercase hexadecimal digits a byte (what `String(format: "%02x")` gives for each), without formatting.
    public var lowercaseHex: String {
        var text: [UInt8] = []
        text.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            text.append(HexDigits.lowercase[Int(byte >> 4)])
            text.append(HexDigits.lowercase[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
