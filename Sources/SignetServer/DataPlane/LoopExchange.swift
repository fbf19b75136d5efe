// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware

/// One request the event-loop data plane answers (``LoopProxyHandler``): its head and body as
/// read, what goes upstream, what the client gets back, and its access-log record — what
/// `AccessLogResponder`, `PathNormalizingResponder` and `GatewayProxy` each add on Hummingbird's
/// path. Lives on the connection's event loop.
final class LoopExchange {
    let head: HTTPRequest
    let routedPath: String
    let client: String?
    private(set) var body: ByteBuffer
    private let maximumBodyBytes: Int
    private var slot: ClientRequestLimiter.Slot?
    private let started = ContinuousClock.now
    private let correlation: RequestCorrelation
    private let record = AccessRecord()
    private var upstreamStarted: ContinuousClock.Instant?
    private(set) var snapshot: DataPlane.Snapshot?
    /// What its gate admitted: held, not copied out (an identity is a dozen references).
    private var admission: LoopAdmission?
    /// Who the request is from, once its gate verified it.
    var identity: SignetIdentity? { admission?.identity }
    /// What verified, where its answer is signed (bound to it).
    var verifiedMessage: ServerMessage? { snapshot?.signsResponses == true ? admission?.message : nil }
    /// On a `monitor` route, what enforcing would have done: `accepted`, or a refusal's reason code.
    private(set) var verdict: String?
    /// Fields of the request a monitored refusal keeps from the upstream, and those it adds to the
    /// answer (``MonitoredGate``).
    private var withheld: [HTTPField.Name] = []
    private var answerFields = HTTPFields()
    /// The request as its gate admitted it, where the gate may rewrite it (``LoopAuthenticator``).
    private var forwarded: HTTPRequest?
    /// Fields its gate sets on the answer (``Admission/answerFields``).
    private var admissionFields = HTTPFields()
    /// What its gate does to the whole answer (``Admission/answering``: Digest's `auth-int` proof).
    private(set) var answering: (@Sendable (inout Response) async throws -> Void)?
    /// Its route needs a signature and its body is still to come: the screen of its head
    /// (``LoopScreen``), begun at the end of the read that brought the head, or after its gate
    /// refused it where the body came in that read too.
    var screen: LoopScreen?
    /// The screen of its head, once begun at the end of a read.
    var screening: EventLoopFuture<Void>?

    /// The screen to run after its gate refused it: its head's, where none was begun while its
    /// body was read (it came whole in the read of its head, or was taken up after an answer).
    var lateScreen: LoopScreen? { screening == nil ? screen : nil }
    /// The upstream side, once the request is forwarded.
    var relay: LoopRelay?

    /// Counts this exchange among those alive.
    private let plane: DataPlane

    init(
        head: HTTPRequest,
        routedPath: String,
        client: String?,
        slot: ClientRequestLimiter.Slot?,
        maximumBodyBytes: Int,
        allocator: ByteBufferAllocator,
        plane: DataPlane
    ) {
        self.plane = plane
        plane.exchangeMade()
        self.head = head
        self.routedPath = routedPath
        self.client = client
        self.slot = slot
        self.maximumBodyBytes = maximumBodyBytes
        body = allocator.buffer(capacity: 0)
        correlation = RequestCorrelation(head.headerFields)
    }

    deinit {
        plane.exchangeGone()
    }

    /// Adds a part of the body; `false` past the limit (nothing added).
    func append(_ part: ByteBuffer) -> Bool {
        guard body.readableBytes + part.readableBytes <= maximumBodyBytes else { return false }
        if body.readableBytes == 0 { body = part } else { body.writeImmutableBuffer(part) }
        return true
    }

    /// The request is complete and judged by `snapshot`.
    func begin(snapshot: DataPlane.Snapshot) {
        self.snapshot = snapshot
        record.update { $0.routedPath = routedPath }
    }

    /// Its gate admitted it as `admission` says: its identity goes upstream and into its access
    /// line, the request as the gate left it goes upstream, and the answer is signed (bound to what
    /// verified) and carries what the gate asked for.
    func admitted(_ admission: LoopAdmission, monitored: Bool) {
        self.admission = admission
        if monitored { verdict = "accepted" }
        record.update { [verdict] in
            $0.identity = admission.identity
            $0.verdict = verdict
        }
        if let (head, body) = admission.forwarded {
            forwarded = head
            self.body = body
        }
        admissionFields = admission.answerFields
        answering = admission.answering
    }

    /// The complete request as the data plane hands it to its gate.
    func request(on channel: any Channel) -> LoopRequest {
        LoopRequest(head: head, routedPath: routedPath, body: body, receivedTarget: receivedTarget, client: client, channel: channel)
    }

    /// Its `monitor` route's gate would have refused it (`verdict`): forwarded all the same, with
    /// the verdict and no identity, counted and kept as ``MonitoredGate`` counts it.
    func wouldRefuse(_ verdict: MonitoredGate.Verdict) {
        self.verdict = verdict.code.rawValue
        record.update { $0.verdict = verdict.code.rawValue }
        snapshot?.metrics.recordRefusal(verdict.code, of: head, source: client, monitored: true)
        withheld = verdict.withheld
        answerFields = verdict.advice
    }

    /// Its answer is signed by the gateway: held whole, then signed (``signedAnswer(_:body:)``).
    var signsAnswer: Bool { verifiedMessage != nil }

    /// Its answer is held whole before it leaves: signed, or reworked by its gate.
    var holdsAnswer: Bool { signsAnswer || answering != nil }

    /// The target as the client sent it, where routing normalised it: what a signature covers.
    var receivedTarget: String? {
        head.path == routedPath ? nil : head.path
    }

    /// It goes upstream now.
    func forwarding() {
        upstreamStarted = .now
    }

    /// What goes upstream, as `GatewayProxy.forward` writes it (``GatewayProxy/upstreamHead``).
    func upstreamRequest(snapshot: DataPlane.Snapshot) -> HTTPRequest {
        let request = forwarded ?? head
        var received = request.headerFields
        for name in withheld { received[name] = nil }
        return GatewayProxy.upstreamHead(
            method: head.method,
            routedTarget: forwarded?.path ?? routedPath,
            received: received,
            framed: request.headerFields[.contentLength] != nil,
            bodyBytes: body.readableBytes,
            identity: admission?.identity,
            verdict: verdict,
            client: client,
            scheme: snapshot.publicScheme,
            publicAuthority: snapshot.publicAuthority ?? head.authority,
            // Made here, it goes upstream with the request (a new field: no signature covers it).
            requestID: correlation.isNew ? correlation.requestID : nil,
            upstream: snapshot.upstream
        )
    }

    /// The head the client gets for the upstream's `upstream`.
    func answerHead(_ upstream: HTTPResponse) -> HTTPResponse {
        let elapsed = upstreamStarted.map { ContinuousClock.now - $0 }
        record.update {
            $0.upstreamStatus = upstream.status.code
            $0.upstreamSeconds = elapsed.map(GatewayProxy.seconds)
        }
        var fields = GatewayProxy.answerFields(upstream.headerFields, gatewaySigns: snapshot?.signsResponses == true)
        if let length = upstream.headerFields[.contentLength] { fields[.contentLength] = length }
        fields.append(contentsOf: answerFields)
        for name in Set(admissionFields.map(\.name)) { fields[name] = nil }
        fields.append(contentsOf: admissionFields)
        // Stamped before the head is made of them: fields shared with a head are copied whole on
        // the first change.
        LoopProxyHandler.stamp(&fields)
        // The code's own reason phrase: the upstream's text stays on its hop.
        return HTTPResponse(status: HTTPResponse.Status(code: upstream.status.code), headerFields: fields)
    }

    /// The answer for the upstream's `upstream` and whole `body`, signed as `GatewayProxy` signs
    /// it; its content `nil` where it has none.
    func signedAnswer(_ upstream: HTTPResponse, body: ByteBuffer) throws -> (HTTPResponse, ByteBuffer?) {
        guard let snapshot, let signer = snapshot.responseSigner, let verifiedMessage else {
            throw SignetError(.internalError, "an answer to sign without a signer or a verified request")
        }
        var answer = answerHead(upstream)
        // The signer writes the framing from the status: an answer without content has no length.
        var fields = answer.headerFields
        fields[.contentLength] = nil
        let (signed, content) = try GatewayProxy.signed(
            status: answer.status,
            method: head.method,
            headers: fields,
            upstreamLength: upstream.headerFields[.contentLength],
            body: body,
            request: verifiedMessage,
            signer: signer,
            created: snapshot.clock()
        )
        answer.headerFields = signed
        return (answer, content)
    }

    /// Refused after it was complete (its gate refused it, the upstream failed, the client went):
    /// recorded as `ProblemMiddleware` records a refusal.
    func refused(_ error: SignetError) {
        let elapsed = upstreamStarted.map { ContinuousClock.now - $0 }
        record.update {
            $0.reason = error.code.rawValue
            if error.code != .clientClosedRequest { $0.upstreamSeconds = elapsed.map(GatewayProxy.seconds) }
        }
        snapshot?.metrics.recordRefusal(error.code, of: head, keyID: identity?.keyID, source: client)
    }

    /// The access-log line and metrics, as the answer's head leaves.
    func logAnswer(status: Int) {
        snapshot?.accessLog.write(head, status: status, record.snapshot, since: started, client: client, correlation)
    }

    /// The client's place among its requests in progress is held until `closed` (an HTTP/2
    /// stream's end), not given back by ``release()``.
    func holdSlot(until closed: EventLoopFuture<Void>) {
        guard let slot else { return }
        self.slot = nil
        closed.whenComplete { _ in slot.release() }
    }

    /// Gives back the client's place among its requests in progress, and lets go of the relay
    /// (which holds this exchange: they would keep each other alive).
    func release() {
        slot?.release()
        slot = nil
        relay = nil
    }
}
