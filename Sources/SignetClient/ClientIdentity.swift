// SPDX-License-Identifier: Apache-2.0

/// A TLS client identity: certificate chain (leaf first) and private key, both PEM.
public struct ClientIdentity: Sendable {
    public var certificateChainPEM: String
    public var privateKeyPEM: String

    public init(certificateChainPEM: String, privateKeyPEM: String) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
    }
}
