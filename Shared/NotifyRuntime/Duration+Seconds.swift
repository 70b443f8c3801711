extension Duration {
    /// The duration in seconds, for rates, due times and report figures.
    public var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
