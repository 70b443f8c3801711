/// What a store refuses, as opposed to a database that does not answer (PostgresNIO's errors pass through).
public struct NotifyStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of refusal.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String { case cursorExpired, invalidPageToken }
        private let base: Base

        /// The cursor is older than the retained change log: the device must start over.
        public static let cursorExpired = Code(base: .cursorExpired)
        /// A page token this store did not give out.
        public static let invalidPageToken = Code(base: .invalidPageToken)

        public var description: String { base.rawValue }
    }

    public let code: Code

    public static let cursorExpired = NotifyStoreError(code: .cursorExpired)
    public static let invalidPageToken = NotifyStoreError(code: .invalidPageToken)

    public var description: String { "NotifyStoreError(\(code))" }
}
