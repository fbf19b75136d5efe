// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SignetMiddleware
import SignetStore

extension SignetRequestVerifier {
    /// RFC 9421 verification as configured: the policy, the standard algorithms and those the
    /// features add (App Attest's assertions), nonces and App Attest counters in the store, and
    /// `appAttest`'s app-build policy wherever a route gives none.
    init(
        _ configuration: GatewayConfiguration,
        store: any SignetStorage,
        metrics: SignetMetrics,
        keyCache: DeviceKeyCache,
        algorithms added: [any SignatureAlgorithm]
    ) throws {
        var policy = VerificationPolicy.standard
        policy.maximumAge = configuration.policy.maxAgeSeconds
        policy.clockSkew = configuration.policy.clockSkewSeconds
        policy.requireNonce = configuration.policy.requireNonce
        if let fields = configuration.policy.coveredFields, !fields.isEmpty {
            policy.componentRules.append(.init(all: fields.map { ComponentIdentifier($0) }))
        }
        // What the proxy removes never reaches the upstream: a signature may not vouch for it.
        policy.removedOnTheWay = ForwardedFields.isNotDelivered
        var algorithms = SignatureAlgorithms.standard
        for algorithm in added { algorithms = algorithms.registering(algorithm) }
        let verifier = MessageVerifier(
            keys: keyCache,
            algorithms: algorithms,
            policy: policy,
            nonces: MeasuredNonceStore(store, metrics: metrics),
            counters: store,
            counterWindow: configuration.appAttest?.counterWidth ?? 0
        )
        self.init(
            verifier: verifier,
            publicScheme: configuration.signedScheme,
            publicAuthority: configuration.publicAuthority,
            maximumBodyBytes: configuration.maxBodyBytes,
            riskLimit: configuration.appAttest?.riskLimit,
            appBuild: try configuration.appAttest?.appBuildPolicy(at: "appAttest")
        )
    }
}
