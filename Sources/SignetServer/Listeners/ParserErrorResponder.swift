// SPDX-License-Identifier: Apache-2.0
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import SignetCore
import SignetMiddleware

/// Answers requests the HTTP parser refuses with problem+json and a reason code, then closes,
/// lingering (``LingeringClose``).
///
/// Hummingbird answers a parser error with a bare `400` and no body. A request with both
/// `Content-Length` and `Transfer-Encoding` (a smuggling attempt), a malformed head, or a header
/// section above the decoder's limits gets `400 request_invalid` or `431 header_too_large` here
/// instead. Sits after the HTTP codecs; when a request is still being read or answered (the error
/// came in its body, perhaps after an early answer) the error goes on to Hummingbird, which closes
/// the connection, so one request never gets two answers.
final class ParserErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Requests whose head went in and whose body has not ended.
    private var reading = 0
    /// Requests whose head went in and whose answer has not ended.
    private var answering = 0
    /// A refusal was written: the connection closes (``LingeringClose``).
    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Closing: nothing the failed decoder still yields is handed on.
        guard !refused else { return }
        switch unwrapInboundIn(data) {
        case .head:
            reading += 1
            answering += 1
        case .end: reading = max(0, reading - 1)
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answering = max(0, answering - 1) }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Answered and closing: one refusal a connection (a version error is reported twice).
        guard !refused else { return }
        guard let parserError = error as? HTTPParserError, reading == 0, answering == 0 else {
            context.fireErrorCaught(error)
            return
        }
        let problem =
            parserError == .headerOverflow
            ? SignetError(.headerTooLarge, "the header section is above the server's limit")
            : SignetError(.requestInvalid, "the HTTP parser refused the request (\(parserError))")
        let (status, headerFields, json) = ProblemResponse.parts(problem, debug: false)
        var fields = headerFields
        fields[.contentLength] = String(json.count)
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: json))), promise: nil)
        refused = true
        // The client reads the refusal, not a reset.
        LingeringClose.writeLast(wrapOutboundOut(.end(nil)), promise: nil, context: context)
    }
}
