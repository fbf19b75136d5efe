// SPDX-License-Identifier: Apache-2.0
import SignetCore

/// The trust in force now — pin sets and the gateway's response keys — shared with what checks
/// connections outside ``SignetClient``: the `URLSession` delegate (`SignetURLSessionDelegate`)
/// and ``ResponseSignatureVerifier``. A client updates it when it applies a newer trust document, so
/// an app's own sessions follow the pins of the live document, not those it was built with.
public final class LiveTrust: Sendable {
    private let state: Locked<(pinSets: [PinSet], responseKeys: KeyRing?)>

    public init(pinSets: [PinSet], responseKeys: KeyRing? = nil) {
        state = Locked((pinSets, responseKeys))
    }

    public var pinSets: [PinSet] { state.withLock { $0.pinSets } }
    public var responseKeys: KeyRing? { state.withLock { $0.responseKeys } }

    func update(pinSets: [PinSet], responseKeys: KeyRing?) {
        state.withLock { $0 = (pinSets, responseKeys) }
    }
}
