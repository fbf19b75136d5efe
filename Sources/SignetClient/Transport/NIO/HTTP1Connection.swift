// SPDX-License-Identifier: Apache-2.0
// The client's own SwiftNIO transport: Linux's (whose URLSession asks nothing about server trust),
// and macOS's for tools and tests. On iOS, tvOS, watchOS and visionOS this file is empty and
// SwiftNIO is not linked (Package.swift, docs/ios.md).
#if os(macOS) || !canImport(Darwin)
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SignetCore

/// One HTTP/1.1 connection (over TLS for https), kept alive and used for one request at a time.
///
/// Requests queue on an `AsyncStream`; a task owns the channel and answers them in order. When the
/// server closes the connection (or a request fails), the connection is marked closed and the
/// client opens a new one for the next request.
final class HTTP1Connection: Sendable {
    struct RawResponse: Sendable {
        var head: HTTPResponseHead
        var body: [UInt8]
    }

    private struct Job: Sendable {
        var head: HTTPRequestHead
        var body: [UInt8]
        var reply: Reply
    }

    /// The waiting request's continuation, resumed exactly once: by the answer, by a failure of the
    /// connection, or by cancellation — whichever comes first. It also knows whether the request
    /// went out: one cancelled while still queued is skipped, and costs the others nothing.
    private final class Reply: Sendable {
        private enum Phase { case queued, sent, cancelled }
        private let state = NIOLockedValueBox<(continuation: CheckedContinuation<RawResponse, any Error>?, phase: Phase)>(
            (nil, .queued)
        )

        func wait(_ continuation: CheckedContinuation<RawResponse, any Error>) {
            state.withLockedValue { $0.continuation = continuation }
        }

        /// The connection takes the request; `false` when it was cancelled while queued.
        func begin() -> Bool {
            state.withLockedValue { state in
                guard state.phase == .queued else { return false }
                state.phase = .sent
                return true
            }
        }

        /// Cancels the request; `true` when it had gone out already, so its answer would arrive on
        /// the connection out of turn and the connection must close.
        func cancel() -> Bool {
            state.withLockedValue { state in
                if state.phase == .queued { state.phase = .cancelled }
                return state.phase == .sent
            }
        }

        func resume(_ result: Result<RawResponse, any Error>) {
            let waiting = state.withLockedValue { state in
                defer { state.continuation = nil }
                return state.continuation
            }
            waiting?.resume(with: result)
        }
    }

    private let jobs: AsyncStream<Job>.Continuation
    private let state = NIOLockedValueBox(false)
    /// Why the TLS handshake was refused, set by the verification callback (the handshake error
    /// itself only says "handshake failed").
    let trustFailure: NIOLockedValueBox<SignetError?>

    var isClosed: Bool { state.withLockedValue { $0 } }

    private let channel: any Channel

    private init(jobs: AsyncStream<Job>.Continuation, trustFailure: NIOLockedValueBox<SignetError?>, channel: any Channel) {
        self.jobs = jobs
        self.trustFailure = trustFailure
        self.channel = channel
    }

    /// Connects; for TLS, `verify` receives the served chain (DER, leaf first) and returns the reason
    /// to refuse, or `nil`.
    static func connect(
        origin: Origin,
        tls: NIOSSLContext?,
        group: any EventLoopGroup,
        maximumResponseBytes: Int,
        verify: @escaping @Sendable ([[UInt8]]) async -> SignetError?
    ) async throws -> HTTP1Connection {
        let trustFailure = NIOLockedValueBox<SignetError?>(nil)
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(10))
                .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                .connect(host: origin.host, port: origin.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            let handler = try NIOSSLClientHandler(
                                context: tls,
                                serverHostname: origin.isIPAddress ? nil : origin.host,
                                customVerificationCallback: { certificates, promise in
                                    promise.completeWithTask {
                                        let chain = certificates.map { (try? $0.toDERBytes()) ?? [] }
                                        if let refusal = await verify(chain) {
                                            trustFailure.withLockedValue { $0 = refusal }
                                            return .failed
                                        }
                                        return .certificateVerified
                                    }
                                }
                            )
                            try channel.pipeline.syncOperations.addHandler(handler)
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                            wrappingChannelSynchronously: channel
                        )
                    }
                }
        } catch {
            throw ClientTransportFailure.unsent(SignetError(.connectionFailed, "cannot connect to \(origin): \(error)"))
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Job.self)
        let connection = HTTP1Connection(jobs: continuation, trustFailure: trustFailure, channel: channel.channel)
        Task {
            await connection.run(channel: channel, jobs: stream, maximumResponseBytes: maximumResponseBytes)
        }
        return connection
    }

    /// Sends one request and waits for its whole response. Cancelling (a timeout) fails it at once
    /// with `CancellationError`; a request that had gone out also closes the connection (without
    /// waiting for the TLS shutdown: its answer would come out of turn), one still queued behind
    /// others is only taken out of the queue — the requests sharing the connection go on.
    func execute(head: HTTPRequestHead, body: [UInt8]) async throws -> RawResponse {
        let reply = Reply()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                reply.wait(continuation)
                if case .terminated = jobs.yield(Job(head: head, body: body, reply: reply)) {
                    reply.resume(.failure(SignetError(.connectionFailed, "the connection is closed")))
                }
            }
        } onCancel: {
            if reply.cancel() { abort() }
            reply.resume(.failure(CancellationError()))
        }
    }

    /// No more requests; the one in flight (if any) still gets its answer.
    func close() {
        state.withLockedValue { $0 = true }
        jobs.finish()
    }

    /// Closes at once, failing the request in flight.
    func abort() {
        close()
        channel.close(promise: nil)
    }

    private func run(
        channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>,
        jobs stream: AsyncStream<Job>,
        maximumResponseBytes: Int
    ) async {
        var pending: Job?
        do {
            try await channel.executeThenClose { inbound, outbound in
                var responses = inbound.makeAsyncIterator()
                for await job in stream {
                    guard job.reply.begin() else { continue }  // cancelled while it waited its turn
                    pending = job
                    // The whole request in one write (one flush): a server that answers as soon as
                    // it has the head and closes (HTTP/1.0) cannot close between our parts. If the
                    // write still fails, the server may have answered early (a 413 before the body,
                    // a close after the head): read that answer before giving up.
                    var parts: [HTTPClientRequestPart] = [.head(job.head)]
                    if !job.body.isEmpty { parts.append(.body(.byteBuffer(ByteBuffer(bytes: job.body)))) }
                    parts.append(.end(nil))
                    var unsent: (any Error)?
                    do {
                        try await outbound.write(contentsOf: parts)
                    } catch {
                        unsent = error
                    }
                    var head: HTTPResponseHead?
                    var body: [UInt8] = []
                    reading: while let part = try await responses.next() {
                        switch part {
                        case .head(let value):
                            // 1xx interim answers are skipped; the final head follows.
                            if value.status.code >= 200 || value.status == .switchingProtocols { head = value }
                        case .body(let buffer):
                            guard body.count + buffer.readableBytes <= maximumResponseBytes else {
                                throw SignetError(.bodyTooLarge, "the response exceeds \(maximumResponseBytes) bytes")
                            }
                            body.append(contentsOf: buffer.readableBytesView)
                        case .end:
                            if head != nil { break reading }
                        }
                    }
                    guard let head else {
                        throw unsent ?? SignetError(.connectionFailed, "the server closed the connection before answering")
                    }
                    pending = nil
                    // Closed before the answer is handed over: the caller's next request must not
                    // find this connection open (HTTP/1.0 servers, `Connection: close`, an answer
                    // that came before the whole request was written).
                    let reusable = head.isKeepAlive && unsent == nil
                    if !reusable { close() }
                    job.reply.resume(.success(RawResponse(head: head, body: body)))
                    if !reusable { break }
                }
            }
        } catch {
            pending?.reply.resume(.failure(mapped(error)))
            pending = nil
        }
        close()
        for await job in stream {
            job.reply.resume(.failure(SignetError(.connectionFailed, "the connection closed")))
        }
    }

    private func mapped(_ error: any Error) -> any Error {
        if let refusal = trustFailure.withLockedValue({ $0 }) { return refusal }
        if error is SignetError { return error }
        return SignetError(.connectionFailed, "\(error)")
    }
}
#endif
