/// A failure of a test's own machinery (a script, a timeout, a broker that cannot be reached), as opposed to an expectation.
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}
