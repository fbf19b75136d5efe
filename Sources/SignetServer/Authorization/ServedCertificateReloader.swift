// SPDX-License-Identifier: Apache-2.0
import NIOCertificateReloading
import NIOSSL
import Synchronization

/// The authorization listener's certificate as gRPC's TLS takes it: read from the listener's
/// ``ServedTLS`` at each handshake, so the certificate a reload renews (`SIGHUP`) reaches new gRPC
/// connections as it reaches the HTTP listener's. Parsed once per certificate.
final class ServedCertificateReloader: CertificateReloader {
    private let served: ServedTLS
    private let parsed = Mutex<(chainPEM: String, override: NIOSSLContextConfigurationOverride)?>(nil)

    init(_ served: ServedTLS) {
        self.served = served
    }

    var sslContextConfigurationOverride: NIOSSLContextConfigurationOverride {
        let tls = served.tls
        return parsed.withLock { cache in
            if let cache, cache.chainPEM == tls.chainPEM { return cache.override }
            var override = NIOSSLContextConfigurationOverride()
            // Read and checked when it was installed: a failure here leaves the previous one.
            guard let chain = try? NIOSSLCertificate.fromPEMBytes(Array(tls.chainPEM.utf8)),
                let key = try? NIOSSLPrivateKey(bytes: Array(tls.keyPEM.utf8), format: .pem)
            else { return cache?.override ?? override }
            override.certificateChain = chain.map { .certificate($0) }
            override.privateKey = .privateKey(key)
            cache = (tls.chainPEM, override)
            return override
        }
    }
}
