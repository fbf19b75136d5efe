// SPDX-License-Identifier: Apache-2.0
// The client's own SwiftNIO transport: Linux's (whose URLSession asks nothing about server trust),
// and macOS's for tools and tests. On iOS, tvOS, watchOS and visionOS this file is empty and
// SwiftNIO is not linked (Package.swift, docs/ios.md).
#if os(macOS) || !canImport(Darwin)
import NIOSSL

extension TLSConfiguration {
    /// The signature algorithms a Signet client accepts from a server: BoringSSL's client defaults
    /// plus Ed25519, which BoringSSL offers only when asked — without it, servers with Ed25519
    /// certificates fail the handshake.
    package static let signetVerifySignatureAlgorithms: [SignatureAlgorithm] = [
        .ecdsaSecp256R1Sha256, .rsaPssRsaeSha256, .rsaPkcs1Sha256, .ecdsaSecp384R1Sha384, .rsaPssRsaeSha384,
        .rsaPkcs1Sha384, .rsaPssRsaeSha512, .rsaPkcs1Sha512, .ed25519,
    ]
}
#endif
