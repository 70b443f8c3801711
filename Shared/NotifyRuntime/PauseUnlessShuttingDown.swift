import ServiceLifecycle

/// Pauses a service's periodic loop for `duration`, ending the pause early when graceful shutdown begins: a plain
/// `Task.sleep` holds the service, and with it the process's exit after SIGTERM, until the pause is over (a broker
/// maintenance loop held a stop for its 30 s interval).
public func pauseUnlessShuttingDown(for duration: Duration) async {
    try? await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
}
