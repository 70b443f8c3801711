extension Duration {
    /// The duration in seconds, for rates and report figures.
    var inSeconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
