// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetClient
import SignetCore
import SignetServer
import SignetTestSupport
import SwiftASN1
import X509

/// The client that goes with the shared harness over HTTPS (`GatewayHarness.start(tls:)`).
extension GatewayHarness {
    /// The gateway's response-signing key.
    var responseKey: SigningKey { gatewayKey }

    /// A client that trusts the served chain's last certificate and pins the chain (and a backup).
    func client(
        identity: ClientIdentity? = nil,
        obliviousKeys: [OHTTPKeyConfiguration] = [],
        timeout: Duration = .seconds(10),
        retry: RequestRetry = RequestRetry(),
        clock: @escaping @Sendable () -> Date = Date.init
    ) throws -> SignetClient {
        let chain = try require(gateway.tls).chain
        // The served chain's pins plus a backup, as a real pin set has.
        let pins = try Set(chain.map { try SPKIPin(certificateDER: $0.serializeAsPEM().derBytes) } + [backupPin()])
        var configuration = SignetClientConfiguration(
            origins: [try Origin(base)],
            trust: ServerTrustEvaluator(
                roots: .only([chain.last!]),
                pinSets: [try PinSet(pattern: try HostPattern("localhost"), pins: pins)]
            ),
            clientIdentity: identity,
            responseKeys: KeyRing([KeyRecord(keyID: "gateway", algorithm: "ed25519", key: responseKey.verificationKey)]),
            timeout: timeout
        )
        configuration.obliviousKeys = obliviousKeys
        configuration.retry = retry
        return try SignetClient(configuration: configuration, clock: clock)
    }
}

struct MissingValue: Error {}

func require<T>(_ value: T?) throws -> T {
    guard let value else { throw MissingValue() }
    return value
}
