// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOPosix
import NIOSSL
import SignetClient

/// Fetches the certificate chain a TLS server presents, as DER, leaf first.
///
/// - Important: This inspects; it does not validate. The verification callback accepts whatever the
///   server sends so that every served certificate can be printed (as `openssl s_client` would).
///   Pins and trust decisions never come from this path.
enum ServedChain {
    static func fetch(host: String, port: Int) async throws -> [[UInt8]] {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification  // needed for the callback to run
        configuration.verifySignatureAlgorithms = TLSConfiguration.signetVerifySignatureAlgorithms
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.any().makePromise(of: [[UInt8]].self)
        let serverName = host.allSatisfy({ $0.isNumber || $0 == "." || $0 == ":" }) ? nil : host
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName) {
                        certificates,
                        verdict in
                        promise.succeed(certificates.compactMap { try? $0.toDERBytes() })
                        verdict.succeed(.certificateVerified)
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .connect(host: host, port: port).get()
        } catch {
            // A promise is completed on every path: no connection fails it, never leaks it.
            promise.fail(error)
            throw CommandFailure("cannot connect to \(host):\(port): \(error)")
        }
        channel.closeFuture.whenComplete { _ in promise.fail(ChannelError.ioOnClosedChannel) }
        let chain = try await promise.futureResult.get()
        try? await channel.close()
        return chain
    }
}
