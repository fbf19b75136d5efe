// SPDX-License-Identifier: Apache-2.0
import NIOCore

/// How the gateway closes an HTTP/1.1 connection it ends with an answer, as nginx's
/// `lingering_close` does: its output first (NIO closes it once what was written is flushed), then
/// what the client still sends read and dropped until it closes its side or ``time`` passes.
///
/// Closed at once with input still coming, the socket answers that input with a reset, and a
/// client's kernel may drop on a reset what its program has not read yet — the answer among it
/// (RFC 9112 §9.6). Used after a `408` (``RequestDeadlineHandler``), after a request that switches
/// NIO's parser off (``ProtocolSwitchHandler``) and after a parser refusal
/// (``ParserErrorResponder``); whoever calls it drops what is read meanwhile.
enum LingeringClose {
    /// How long a closing connection's input is read and dropped before it is closed whole.
    static let time: TimeAmount = .seconds(2)

    /// Begins: the full close is armed first (an output close an HTTP/2 stream escalates ends it
    /// at once), the output closed unless `closingOutput` is false (another handler did), and a
    /// read asked for. The caller cancels what is returned when the channel goes inactive, and
    /// closes the channel when its input closes.
    static func begin(_ context: ChannelHandlerContext, closingOutput: Bool = true) -> Scheduled<Void> {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let end = context.eventLoop.scheduleTask(in: time) { loopBound.value.close(promise: nil) }
        if closingOutput {
            context.close(mode: .output).whenFailure { error in
                // Closed already is what was asked for; anything else, the connection goes whole.
                if case ChannelError.outputClosed = error { return }
                loopBound.value.close(promise: nil)
            }
        }
        if context.channel.isActive { context.read() }
        return end
    }
}
