/// What a per-source limit's `Retry-After` may say: the rest of the window that opened with the
/// first counted request. A busy CI machine can take seconds between that request and the refusal,
/// so the lower bound follows the clock instead of a fixed margin; the upper bound is the window.
public struct RestOfWindow: Sendable {
    private let opened = ContinuousClock.now
    private let window: Int

    /// Starts the clock; call it just before the first request the limit counts.
    public init(seconds window: Int = 60) { self.window = window }

    /// Whether `retryAfter` (seconds, as the field carries them) is the rest of the window.
    public func admits(_ retryAfter: Int?) -> Bool {
        guard let retryAfter else { return false }
        let elapsed = Int((ContinuousClock.now - opened).components.seconds) + 1
        return (window - elapsed - 1...window).contains(retryAfter)
    }
}
