// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import Logging
import NIOCore
import SignetCore
import SignetMiddleware
import Synchronization

/// The event-loop data plane's view of the configuration in force on the apps' listener
/// (``LoopProxyHandler``): which requests it answers itself, on the connection's event loop, and
/// with what. Replaced by a reload as the listener's responders are; a request is judged by the
/// snapshot in force when it is complete.
final class DataPlane: Sendable {
    private let current = Mutex<Snapshot?>(nil)
    private let forwarded = Atomic<Int>(0)

    /// Requests this data plane has forwarded since the listener started (for tests and the
    /// bench: which path a request took).
    var forwardedCount: Int { forwarded.load(ordering: .relaxed) }

    func countForwarded() {
        forwarded.add(1, ordering: .relaxed)
    }

    private let refused = Atomic<Int>(0)

    /// Requests this data plane has answered itself without an upstream's answer: refused by
    /// their gate, or the upstream failed (for tests: which path refused a request).
    var refusedCount: Int { refused.load(ordering: .relaxed) }

    func countRefused() {
        refused.add(1, ordering: .relaxed)
    }

    private let live = Atomic<Int>(0)

    /// Exchanges alive now: none once every request has been answered (an exchange and its relay
    /// that kept each other alive once leaked every request's body).
    var liveExchanges: Int { live.load(ordering: .relaxed) }

    func exchangeMade() { live.add(1, ordering: .relaxed) }
    func exchangeGone() { live.subtract(1, ordering: .relaxed) }

    /// The snapshot in force; `nil` while none is (every request then goes to Hummingbird).
    var snapshot: Snapshot? { current.withLock { $0 } }

    func replace(with snapshot: Snapshot?) {
        current.withLock { $0 = snapshot }
    }

    /// One configuration's data plane. A class: each request holds it from its head to its
    /// answer, and a copy of a struct of this many references cost a verified request some 130
    /// retains and as many releases.
    final class Snapshot: Sendable {
        let routes: RouteTable
        /// The loop gate of each access the route table names that has one (``LoopGate``).
        let gates: [GatewayConfiguration.Route.Access: LoopGate]
        let upstream: UpstreamClient
        /// For the upstream to connect, to answer, and between two parts of its answer.
        let timeout: TimeAmount
        let maximumBodyBytes: Int
        /// A request's time for the store, for its gate (``StoreBudget``).
        let storeTimeout: Duration
        /// Signs the answers to verified requests, bound to them; where it is set, an upstream's
        /// own `gateway` signature never reaches a client.
        let responseSigner: MessageSigner?
        /// The time answers are signed at.
        let clock: @Sendable () -> Date
        let publicScheme: String
        let publicAuthority: String?
        let trustedProxies: TrustedProxies?
        /// Requests in progress per client, where Hummingbird's path counts them.
        let clientRequests: (limiter: ClientRequestLimiter, perClient: Int)?
        let accessLog: AccessLog
        let metrics: SignetMetrics
        let logger: Logger
        let debug: Bool

        /// Screens the heads of requests to routes that need a signature, as Hummingbird's path does.
        let requestVerifier: SignetRequestVerifier

        init(
            routes: RouteTable,
            gates: [GatewayConfiguration.Route.Access: LoopGate],
            upstream: UpstreamClient,
            timeout: TimeAmount,
            maximumBodyBytes: Int,
            storeTimeout: Duration,
            responseSigner: MessageSigner?,
            clock: @escaping @Sendable () -> Date,
            publicScheme: String,
            publicAuthority: String?,
            trustedProxies: TrustedProxies?,
            clientRequests: (limiter: ClientRequestLimiter, perClient: Int)?,
            accessLog: AccessLog,
            metrics: SignetMetrics,
            logger: Logger,
            debug: Bool,
            requestVerifier: SignetRequestVerifier
        ) {
            self.routes = routes
            self.gates = gates
            self.upstream = upstream
            self.timeout = timeout
            self.maximumBodyBytes = maximumBodyBytes
            self.storeTimeout = storeTimeout
            self.responseSigner = responseSigner
            self.clock = clock
            self.publicScheme = publicScheme
            self.publicAuthority = publicAuthority
            self.trustedProxies = trustedProxies
            self.clientRequests = clientRequests
            self.accessLog = accessLog
            self.metrics = metrics
            self.logger = logger
            self.debug = debug
            self.requestVerifier = requestVerifier
        }

        var signsResponses: Bool { responseSigner != nil }

        /// The screen of `head`'s request under `decision`, where Hummingbird's path would screen
        /// it (``RouteTable/signature(method:path:deliversKey:)``): an enforced route that needs a
        /// signature, and no key delivered where the route takes delivered keys.
        func screen(_ head: HTTPRequest, _ decision: Decision) -> LoopScreen? {
            guard let requirement = decision.rule.screening(deliversKey: { RequestCompletionResponder.deliversKey(head.headerFields) }) else {
                return nil
            }
            return LoopScreen(snapshot: self, requirement: requirement)
        }

        /// How the data plane judges a request: its route's gate, and what its head's screen needs.
        struct Decision {
            let gate: LoopGate
            /// The route: its mode, and what its requests' heads are screened against.
            let rule: RouteTable.Entry

            /// A `monitor` route (one with a gate to judge: it forwards what it would refuse, as
            /// ``MonitoredGate`` does).
            var monitored: Bool { rule.mode == .monitor }
        }

        /// The decision on the request, where the data plane answers it: a proxied method, a path
        /// that normalises to `routedPath` outside Signet's own segments, and a route in force
        /// whose gate runs on the loop.
        func decide(method: HTTPRequest.Method, routedPath: String) -> Decision? {
            guard SignetGateway.proxiedMethods.contains(method) else { return nil }
            // The first segment, by bytes as routers split paths: splitting the String walked the
            // whole path by Character, twice a request (its head, its end), and a `/` that a
            // combining mark follows would not have split it.
            let first = routedPath.utf8.drop { $0 == UInt8(ascii: "/") }.prefix { $0 != UInt8(ascii: "/") }
            if !first.isEmpty, RouteTable.reservedSegments.contains(String(Substring(first)).lowercased()) {
                return nil
            }
            guard let rule = routes.rule(method: method.rawValue, path: routedPath), let gate = gates[rule.access] else { return nil }
            // A monitored `open` route has nothing to judge here: it stays Hummingbird's, as before.
            if rule.mode == .monitor, case .open = gate { return nil }
            return Decision(gate: gate, rule: rule)
        }
    }
}

extension SignetGateway {
    /// This configuration's data plane for the apps' listener; `nil` where the upstream is not a
    /// network one (a recording upstream in router tests: everything then goes through Hummingbird).
    func dataPlaneSnapshot(listener: FeatureListener) -> DataPlane.Snapshot? {
        guard let client = upstream as? UpstreamClient else { return nil }
        var gates: [GatewayConfiguration.Route.Access: LoopGate] = [:]
        for access in Set(configuration.routes.map(\.access)) {
            guard let owner = AccessModeRegistry.owner(of: access.mode), let feature = feature(ownedBy: owner),
                let gate = feature.loopGate(for: access, listener: listener)
            else { continue }
            gates[access] = gate
        }
        return DataPlane.Snapshot(
            routes: routes,
            gates: gates,
            upstream: client,
            timeout: .seconds(Int64(configuration.upstreamTimeoutSeconds)),
            maximumBodyBytes: configuration.maxBodyBytes,
            storeTimeout: .milliseconds(configuration.storeTimeoutMilliseconds),
            responseSigner: responseSigner,
            clock: clock,
            publicScheme: configuration.signedScheme,
            publicAuthority: configuration.publicAuthority,
            trustedProxies: trustedProxies,
            // Counted where Hummingbird's path counts them (`entryResponder`): a client's HTTP/1.1
            // requests beside its HTTP/2 streams too.
            clientRequests: trustedProxies == nil && !configuration.offersHTTP2 ? nil : (clientRequests, configuration.maxConnectionsPerClient),
            accessLog: accessLog,
            metrics: metrics,
            logger: logger,
            debug: configuration.debug,
            requestVerifier: dependencies.requestVerifier
        )
    }
}
