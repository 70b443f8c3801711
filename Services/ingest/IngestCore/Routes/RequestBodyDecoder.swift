import Foundation
import NotifyModels

/// The JSON decoder of every request body ingest reads with `Decodable` (all but the publish body, which `JSONReader`
/// reads): `WireCoding`'s conventions, and a number that does not fit its field's type named by its path.
///
/// Foundation's JSONDecoder answers such a number (a fraction where an integer is expected, or one out of the type's
/// range) with an internal error that its `decode` turns into "the given data was not valid JSON", with no coding path:
/// the client was told its body was not JSON and not which field was wrong. This decoder reads the body through
/// `FieldTrackingDecoder`, which knows each value's path as it is read and names it in that error, so that
/// `DecodingFailure` answers 400 `invalid_field` with the field, as publish does; everything else is JSONDecoder's own.
// `@unchecked` restates JSONDecoder's own conformance, as Swift requires of a subclass; this adds no state.
final class RequestBodyDecoder: JSONDecoder, @unchecked Sendable {
    override init() {
        super.init()
        dateDecodingStrategy = WireCoding.makeDecoder().dateDecodingStrategy
    }

    override func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try super.decode(FieldTracked<T>.self, from: data).value
    }
}

/// A value read through `FieldTrackingDecoder`.
private struct FieldTracked<Value: Decodable>: Decodable {
    var value: Value

    init(from decoder: any Decoder) throws {
        value = try FieldTrackingDecoder(decoder).decode(Value.self)
    }
}

/// Wraps the decoder JSONDecoder hands a type (and every container it opens) and delegates each read to it; a number
/// JSONDecoder cannot convert to the type asked for is rethrown as `DecodingError.dataCorrupted` at its coding path.
/// A nested `Decodable` is read through a wrapped decoder of its own, except the types JSONDecoder reads by its
/// strategies (`Date`, `Data`, `URL`, `Decimal`), which it is asked for directly.
struct FieldTrackingDecoder: Decoder {
    let inner: any Decoder

    init(_ inner: any Decoder) {
        self.inner = inner
    }

    var codingPath: [any CodingKey] { inner.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { inner.userInfo }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(TrackingKeyedContainer(inner: try inner.container(keyedBy: type)))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        TrackingUnkeyedContainer(inner: try inner.unkeyedContainer())
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        TrackingSingleValueContainer(inner: try inner.singleValueContainer(), decoder: self)
    }

    /// The value this decoder holds, as `T`.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if Self.decodedByStrategy(type) { return try inner.singleValueContainer().decode(type) }
        return try T(from: self)
    }

    static func decodedByStrategy(_ type: Any.Type) -> Bool {
        type == Date.self || type == Data.self || type == URL.self || type == Decimal.self
    }

    /// Runs a read of a number, turning JSONDecoder's pathless refusal of it into one at `path`.
    static func number<T>(_ type: T.Type, at path: @autoclosure () -> [any CodingKey], _ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch let error as DecodingError {
            guard case .dataCorrupted(let context) = error, context.codingPath.isEmpty else { throw error }
            throw numberDoesNotFit(type, at: path(), underlying: error)
        } catch {
            // JSONDecoder's own number error, which its top-level decode would report as invalid JSON.
            throw numberDoesNotFit(type, at: path(), underlying: error)
        }
    }

    private static func numberDoesNotFit<T>(_ type: T.Type, at path: [any CodingKey], underlying: any Error) -> DecodingError {
        let expected = type == Double.self || type == Float.self ? "a number" : "an integer"
        return .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: "the number does not fit \(expected)", underlyingError: underlying))
    }
}

private struct TrackingKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let inner: KeyedDecodingContainer<Key>

    var codingPath: [any CodingKey] { inner.codingPath }
    var allKeys: [Key] { inner.allKeys }

    func contains(_ key: Key) -> Bool { inner.contains(key) }
    func decodeNil(forKey key: Key) throws -> Bool { try inner.decodeNil(forKey: key) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try inner.decode(type, forKey: key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try inner.decode(type, forKey: key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try number(type, key) { try inner.decode(type, forKey: key) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try number(type, key) { try inner.decode(type, forKey: key) } }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if FieldTrackingDecoder.decodedByStrategy(type) { return try inner.decode(type, forKey: key) }
        // JSONDecoder's superDecoder reads a missing key as null: say it is missing, as its decode would.
        guard inner.contains(key) else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)"))
        }
        return try FieldTrackingDecoder(try inner.superDecoder(forKey: key)).decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(TrackingKeyedContainer<NestedKey>(inner: try inner.nestedContainer(keyedBy: type, forKey: key)))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        TrackingUnkeyedContainer(inner: try inner.nestedUnkeyedContainer(forKey: key))
    }

    func superDecoder() throws -> any Decoder { FieldTrackingDecoder(try inner.superDecoder()) }
    func superDecoder(forKey key: Key) throws -> any Decoder { FieldTrackingDecoder(try inner.superDecoder(forKey: key)) }

    private func number<T>(_ type: T.Type, _ key: Key, _ read: () throws -> T) throws -> T {
        try FieldTrackingDecoder.number(type, at: codingPath + [key], read)
    }
}

private struct TrackingUnkeyedContainer: UnkeyedDecodingContainer {
    var inner: any UnkeyedDecodingContainer

    var codingPath: [any CodingKey] { inner.codingPath }
    var count: Int? { inner.count }
    var isAtEnd: Bool { inner.isAtEnd }
    var currentIndex: Int { inner.currentIndex }

    mutating func decodeNil() throws -> Bool { try inner.decodeNil() }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try inner.decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try inner.decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try number(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try number(type) { try $0.decode(type) } }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if FieldTrackingDecoder.decodedByStrategy(type) { return try inner.decode(type) }
        return try FieldTrackingDecoder(try inner.superDecoder()).decode(type)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(TrackingKeyedContainer<NestedKey>(inner: try inner.nestedContainer(keyedBy: type)))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        TrackingUnkeyedContainer(inner: try inner.nestedUnkeyedContainer())
    }

    mutating func superDecoder() throws -> any Decoder { FieldTrackingDecoder(try inner.superDecoder()) }

    /// The element about to be read is at `codingPath` + its index.
    private mutating func number<T>(_ type: T.Type, _ read: (inout any UnkeyedDecodingContainer) throws -> T) throws -> T {
        let path = codingPath + [ElementKey(index: inner.currentIndex)]
        return try FieldTrackingDecoder.number(type, at: path) { try read(&inner) }
    }
}

private struct TrackingSingleValueContainer: SingleValueDecodingContainer {
    let inner: any SingleValueDecodingContainer
    /// Reads a nested `Decodable` here, as JSONDecoder's own container hands it its decoder.
    let decoder: FieldTrackingDecoder

    var codingPath: [any CodingKey] { inner.codingPath }

    func decodeNil() -> Bool { inner.decodeNil() }
    func decode(_ type: Bool.Type) throws -> Bool { try inner.decode(type) }
    func decode(_ type: String.Type) throws -> String { try inner.decode(type) }
    func decode(_ type: Double.Type) throws -> Double { try number(type) { try inner.decode(type) } }
    func decode(_ type: Float.Type) throws -> Float { try number(type) { try inner.decode(type) } }
    func decode(_ type: Int.Type) throws -> Int { try number(type) { try inner.decode(type) } }
    func decode(_ type: Int8.Type) throws -> Int8 { try number(type) { try inner.decode(type) } }
    func decode(_ type: Int16.Type) throws -> Int16 { try number(type) { try inner.decode(type) } }
    func decode(_ type: Int32.Type) throws -> Int32 { try number(type) { try inner.decode(type) } }
    func decode(_ type: Int64.Type) throws -> Int64 { try number(type) { try inner.decode(type) } }
    func decode(_ type: UInt.Type) throws -> UInt { try number(type) { try inner.decode(type) } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try number(type) { try inner.decode(type) } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try number(type) { try inner.decode(type) } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try number(type) { try inner.decode(type) } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try number(type) { try inner.decode(type) } }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if FieldTrackingDecoder.decodedByStrategy(type) { return try inner.decode(type) }
        return try T(from: decoder)
    }

    private func number<T>(_ type: T.Type, _ read: () throws -> T) throws -> T {
        try FieldTrackingDecoder.number(type, at: codingPath, read)
    }
}

/// An array element's place in a coding path.
private struct ElementKey: CodingKey {
    var stringValue: String { "Index \(index)" }
    var intValue: Int? { index }
    let index: Int

    init(index: Int) {
        self.index = index
    }

    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.init(index: intValue) }
}
