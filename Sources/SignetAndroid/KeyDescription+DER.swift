// SPDX-License-Identifier: Apache-2.0
import SwiftASN1

// Writing the record, in the layout the Keystore uses: what a simulated device puts in its
// attestation certificates (SignetSimulator), so tests and the demo exercise the same reader that
// real chains go through.

extension KeyDescription {
    public init(
        attestationVersion: Int = 200,
        attestationSecurityLevel: SecurityLevel = .trustedEnvironment,
        keymasterVersion: Int = 200,
        keymasterSecurityLevel: SecurityLevel = .trustedEnvironment,
        attestationChallenge: [UInt8],
        uniqueID: [UInt8] = [],
        softwareEnforced: AuthorizationList = AuthorizationList(),
        hardwareEnforced: AuthorizationList = AuthorizationList()
    ) {
        self.attestationVersion = attestationVersion
        self.attestationSecurityLevel = attestationSecurityLevel
        self.keymasterVersion = keymasterVersion
        self.keymasterSecurityLevel = keymasterSecurityLevel
        self.attestationChallenge = attestationChallenge
        self.uniqueID = uniqueID
        self.softwareEnforced = softwareEnforced
        self.hardwareEnforced = hardwareEnforced
    }

    /// The extension's value: the DER of the `KeyDescription` SEQUENCE.
    public func derEncoded() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { s in
            try s.serialize(attestationVersion)
            try attestationSecurityLevel.rawValue.serialize(into: &s, withIdentifier: .enumerated)
            try s.serialize(keymasterVersion)
            try keymasterSecurityLevel.rawValue.serialize(into: &s, withIdentifier: .enumerated)
            try s.serialize(ASN1OctetString(contentBytes: attestationChallenge[...]))
            try s.serialize(ASN1OctetString(contentBytes: uniqueID[...]))
            try softwareEnforced.serialize(into: &s)
            try hardwareEnforced.serialize(into: &s)
        }
        return serializer.serializedBytes
    }
}

extension AuthorizationList {
    /// Fields in ascending tag order, each `[tag] EXPLICIT`, as the Keystore writes them.
    func serialize(into serializer: inout DER.Serializer) throws {
        try serializer.appendConstructedNode(identifier: .sequence) { s in
            func tagged(_ tag: UInt, _ body: (inout DER.Serializer) throws -> Void) throws {
                try s.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: tag, tagClass: .contextSpecific), body)
            }
            if let purposes {
                try tagged(1) { s in
                    try s.appendConstructedNode(identifier: .set) { s in for purpose in purposes.sorted() { try s.serialize(purpose) } }
                }
            }
            if let algorithm { try tagged(2) { try $0.serialize(algorithm) } }
            if let keySize { try tagged(3) { try $0.serialize(keySize) } }
            if let ecCurve { try tagged(10) { try $0.serialize(ecCurve) } }
            if let creationDateTime { try tagged(701) { try $0.serialize(creationDateTime) } }
            if let origin { try tagged(702) { try $0.serialize(origin) } }
            if let rootOfTrust { try tagged(704) { try rootOfTrust.serialize(into: &$0) } }
            if let osVersion { try tagged(705) { try $0.serialize(osVersion) } }
            if let osPatchLevel { try tagged(706) { try $0.serialize(osPatchLevel) } }
            if let attestationApplicationID {
                let inner = try attestationApplicationID.derEncoded()
                try tagged(709) { try $0.serialize(ASN1OctetString(contentBytes: inner[...])) }
            }
            if let vendorPatchLevel { try tagged(718) { try $0.serialize(vendorPatchLevel) } }
            if let bootPatchLevel { try tagged(719) { try $0.serialize(bootPatchLevel) } }
        }
    }
}

extension RootOfTrust {
    public init(
        verifiedBootKey: [UInt8],
        deviceLocked: Bool,
        verifiedBootState: VerifiedBootState,
        verifiedBootHash: [UInt8]? = nil
    ) {
        self.verifiedBootKey = verifiedBootKey
        self.deviceLocked = deviceLocked
        self.verifiedBootState = verifiedBootState
        self.verifiedBootHash = verifiedBootHash
    }

    func serialize(into serializer: inout DER.Serializer) throws {
        try serializer.appendConstructedNode(identifier: .sequence) { s in
            try s.serialize(ASN1OctetString(contentBytes: verifiedBootKey[...]))
            try s.serialize(deviceLocked)
            try verifiedBootState.rawValue.serialize(into: &s, withIdentifier: .enumerated)
            if let verifiedBootHash { try s.serialize(ASN1OctetString(contentBytes: verifiedBootHash[...])) }
        }
    }
}

extension AttestationApplicationID {
    public init(packages: [Package], signatureDigests: [[UInt8]]) {
        self.packages = packages
        self.signatureDigests = signatureDigests
    }

    /// The DER the record carries inside an OCTET STRING (tag 709).
    func derEncoded() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { s in
            try s.appendConstructedNode(identifier: .set) { s in
                for package in packages {
                    try s.appendConstructedNode(identifier: .sequence) { s in
                        try s.serialize(ASN1OctetString(contentBytes: Array(package.name.utf8)[...]))
                        try s.serialize(package.version)
                    }
                }
            }
            try s.appendConstructedNode(identifier: .set) { s in
                for digest in signatureDigests { try s.serialize(ASN1OctetString(contentBytes: digest[...])) }
            }
        }
        return serializer.serializedBytes
    }
}
