// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension MessageSigner {
    /// The gateway's response signer (`responseSigning`). Its key file is created only when
    /// `create` — a first start: at a reload, a new key under the same key id would fail every
    /// client that pinned the published one.
    init(gatewayResponses signing: GatewayConfiguration.ResponseSigning, create: Bool) throws {
        let text: String
        let key: SigningKey
        do {
            text = try PrivateKeyFile.loadOrCreate(signing.keyFile, what: "the response signing key", at: "responseSigning.keyFile", create: create) {
                try SigningKey.generate(.p256).pemRepresentation ?? ""
            }
            key = try SigningKey(text: text)
        } catch let error as SignetError {
            // The operator's file: a ConfigurationError at its key, not a client's reason code.
            throw ConfigurationError(.file, at: "responseSigning.keyFile", "responseSigning.keyFile: \(error.reason)")
        }
        let algorithm = try SignatureAlgorithms.standard.require(key.type.defaultAlgorithm)
        self.init(key: key, keyID: signing.keyId, algorithm: algorithm)
    }
}
