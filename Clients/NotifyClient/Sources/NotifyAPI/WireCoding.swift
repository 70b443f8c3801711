import Foundation

/// The JSON conventions of every HTTP body and AMQP message: camelCase keys,
/// ISO-8601 UTC timestamps with milliseconds (input accepts them with or without fractions).
public enum WireCoding {
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatTimestamp(date))
        }
        return encoder
    }

    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an ISO-8601 timestamp such as 2026-01-31T12:00:00Z")
            }
            return date
        }
        return decoder
    }

    private static let withFractions = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)
    private static let withoutFractions = Date.ISO8601FormatStyle(includingFractionalSeconds: false, timeZone: .gmt)

    /// Written byte by byte: every date of every command, change event and push job goes through here.
    public static func formatTimestamp(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        WireTimestamp.append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The wire form (`2026-01-31T12:00:00.000Z`) is read by hand (`WireTimestamp`); other ISO 8601 forms by Foundation.
    public static func parseTimestamp(_ text: String) -> Date? {
        var text = text
        if let date = text.withUTF8({ WireTimestamp.parse(UnsafeRawBufferPointer($0)) }) { return date }
        if let date = try? withFractions.parse(text) { return date }
        return try? withoutFractions.parse(text)
    }
}
