// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAppAttest
import SignetCore
import SwiftASN1
import X509

/// A software App Attest device: a P-256 key, attestations from a ``DevelopmentAttestationCA`` and
/// assertions with a monotonic counter, byte-compatible with Apple's formats. App Attest does not
/// run in Apple's own simulator; this lets tests and `signet demo` exercise the real verification path.
public final class SimulatedAppAttestDevice: Sendable {
    public let appID: String
    public let environment: AppAttestPolicy.Environment
    private let ca: DevelopmentAttestationCA
    private let privateKey: P256.Signing.PrivateKey
    private let counter = Locked<UInt32>(0)
    private let declared = Locked<AppBuild?>(nil)

    /// - Parameters:
    ///   - appID: `TEAMID.bundle.id`, whose hash the authenticator data carries.
    ///   - environment: `development` (the default) or `production`: the AAGUID written.
    ///   - ca: The development CA that signs the attestation.
    ///   - appBuild: The app build the device declares in its attestation and assertions, as iOS 27
    ///     does; `nil` declares none, as iOS 26 and older.
    public init(
        appID: String,
        environment: AppAttestPolicy.Environment = .development,
        ca: DevelopmentAttestationCA,
        appBuild: AppBuild? = nil
    ) {
        self.appID = appID
        self.environment = environment
        self.ca = ca
        self.privateKey = P256.Signing.PrivateKey()
        declared.withLock { $0 = appBuild }
    }

    /// The app build written from now on (an update, or a re-signed binary on the same key).
    public var appBuild: AppBuild? {
        get { declared.withLock { $0 } }
        set { declared.withLock { $0 = newValue } }
    }

    /// iOS 27's extension map as Apple's 2026 sample writes it (flags unchanged, version first, the
    /// category as four little-endian bytes); nothing when no build is declared.
    private var extensions: [UInt8] {
        guard let build = appBuild, !build.isUndeclared else { return [] }
        var entries: [(key: CBORValue, value: CBORValue)] = []
        if let version = build.bundleVersion { entries.append((.text("apple_bundle_version_01"), .text(version))) }
        if let category = build.category {
            let value = category.rawValue
            let littleEndian = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            entries.append((.text("apple_validation_category_01"), .bytes(littleEndian)))
        }
        return CBOREncoder.encode(.map(entries))
    }

    /// A device kept from an earlier launch: its key and the last counter it used.
    init(appID: String, environment: AppAttestPolicy.Environment, ca: DevelopmentAttestationCA, kept: Kept) throws {
        self.appID = appID
        self.environment = environment
        self.ca = ca
        self.privateKey = try P256.Signing.PrivateKey(rawRepresentation: kept.key)
        counter.withLock { $0 = kept.counter }
    }

    /// What survives a relaunch (``SimulatedAppAttestService`` keeps it in a store).
    struct Kept: Codable, Equatable {
        var key: Data
        var counter: UInt32
    }

    var kept: Kept { Kept(key: privateKey.rawRepresentation, counter: counter.withLock { $0 }) }

    /// The key id as `DCAppAttestService` gives it: base64 of SHA256 of the 65-byte point.
    public var keyID: String { Base64.encode(keyIDBytes) }

    private var keyIDBytes: [UInt8] { Array(SHA256.hash(data: Array(privateKey.publicKey.x963Representation))) }

    /// `attestKey(_:clientDataHash:)`: an attestation object for `clientDataHash`.
    public func attest(clientDataHash: [UInt8], now: Date = Date()) throws -> [UInt8] {
        let point = Array(privateKey.publicKey.x963Representation)
        let aaguid =
            environment == .development
            ? Array("appattestdevelop".utf8) : Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        let cose = CBOREncoder.encode(
            .map([
                (.unsigned(1), .unsigned(2)), (.unsigned(3), .negative(6)), (.negative(0), .unsigned(1)),
                (.negative(1), .bytes(Array(point[1...32]))), (.negative(2), .bytes(Array(point[33...]))),
            ])
        )
        let authData =
            Array(SHA256.hash(data: Array(appID.utf8))) + [0x40, 0, 0, 0, 0] + aaguid + [0, 32] + keyIDBytes + cose
            + extensions
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        let leaf = try ca.issueLeaf(publicKey: privateKey.publicKey, nonce: nonce, now: now)
        var leafDER = DER.Serializer()
        try leafDER.serialize(leaf)
        var intermediateDER = DER.Serializer()
        try intermediateDER.serialize(ca.intermediate)
        let receipt = try ca.receiptSigner.receipt(
            AppAttestReceipt(
                appID: appID,
                attestedCertificate: leafDER.serializedBytes,
                clientHash: clientDataHash,
                token: Array(Base64.encode(Array(SHA256.hash(data: keyIDBytes))).utf8),
                kind: .attest,
                environment: environment == .production ? "production" : "sandbox",
                createdAt: now,
                expiresAt: now.addingTimeInterval(90 * 86_400)
            )
        )
        return CBOREncoder.encode(
            .map([
                (.text("fmt"), .text("apple-appattest")),
                (
                    .text("attStmt"),
                    .map([
                        (
                            .text("x5c"),
                            .array([.bytes(leafDER.serializedBytes), .bytes(intermediateDER.serializedBytes)])
                        ),
                        (.text("receipt"), .bytes(receipt)),
                    ])
                ),
                (.text("authData"), .bytes(authData)),
            ])
        )
    }

    /// `generateAssertion(_:clientDataHash:)` over `SHA256(clientData)`; the counter goes up by one.
    public func assertion(clientData: [UInt8]) throws -> [UInt8] {
        let count = counter.withLock { value -> UInt32 in
            value += 1
            return value
        }
        return try assertion(clientData: clientData, counter: count)
    }

    /// An assertion with a chosen counter (to test rollback and reordering).
    public func assertion(clientData: [UInt8], counter: UInt32) throws -> [UInt8] {
        try assertion(clientDataHash: Array(SHA256.hash(data: clientData)), counter: counter)
    }

    /// `generateAssertion(_:clientDataHash:)` as Apple has it: over a hash the app made; the counter
    /// goes up by one.
    public func assertion(clientDataHash: [UInt8]) throws -> [UInt8] {
        let count = counter.withLock { value -> UInt32 in
            value += 1
            return value
        }
        return try assertion(clientDataHash: clientDataHash, counter: count)
    }

    private func assertion(clientDataHash: [UInt8], counter: UInt32) throws -> [UInt8] {
        let authData =
            Array(SHA256.hash(data: Array(appID.utf8))) + [0x40] + withUnsafeBytes(of: counter.bigEndian, Array.init)
            + extensions
        let nonce = Array(SHA256.hash(data: authData + clientDataHash))
        let signature = try privateKey.signature(for: Data(nonce)).derRepresentation
        return CBOREncoder.encode(
            .map([(.text("signature"), .bytes(Array(signature))), (.text("authenticatorData"), .bytes(authData))])
        )
    }
}

/// Signs RFC 9421 messages with a simulated device: the `apple-app-attest` algorithm's client side.
public struct SimulatedAppAttestSigner: Sendable {
    public let device: SimulatedAppAttestDevice

    public init(device: SimulatedAppAttestDevice) {
        self.device = device
    }

    /// MessageSigner wants a key; the device's own key lives inside the device.
    private static let placeholderKey = try! SigningKey(secret: [0])

    /// Signs `message`: the signature base is the assertion's clientData.
    public func sign(
        _ message: HTTPMessage,
        components: [ComponentIdentifier]? = nil,
        created: Date,
        nonce: String?,
        label: String = "sig1",
        counter: UInt32? = nil
    ) throws -> HTTPMessage {
        let signer = MessageSigner(
            key: Self.placeholderKey,  // never used: the algorithm below signs with the device
            keyID: device.keyID,
            algorithm: DeviceAlgorithm(device: device, counter: counter),
            includeAlgorithm: true
        )
        return try signer.sign(message, label: label, components: components, created: created, nonce: nonce)
    }

    private struct DeviceAlgorithm: SignatureAlgorithm {
        let device: SimulatedAppAttestDevice
        /// A chosen counter (to test rollback); the device's next one otherwise.
        let counter: UInt32?
        var name: String { "apple-app-attest" }
        var keyType: KeyType { .p256 }
        func sign(_ base: [UInt8], with key: SigningKey) throws -> [UInt8] {
            if let counter { return try device.assertion(clientData: base, counter: counter) }
            return try device.assertion(clientData: base)
        }
        func verify(_ signature: [UInt8], over base: [UInt8], with key: VerificationKey) throws -> AlgorithmEvidence {
            throw SignetError(.algUnsupported, "the simulator signs only")
        }
    }
}
