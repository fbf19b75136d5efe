// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetStore

/// `POST /signet/v1/devices/debug`: an operator registers a debug device by its public key — what
/// Firebase App Check's debug provider does with a debug token, with a key that proves possession
/// on every request instead of a bearer secret. The simulator or a CI runner makes the key
/// (`DebugDeviceProvider` in SignetSimulator), prints its JWK once, and signs with it; the device
/// is `debug`, which routes that name a platform refuse.
extension SignetRegistrationRoutes {
    /// `{"name": "…", "publicKey": {JWK} or "PEM", "alg": "ecdsa-p256-sha256" | "ed25519"}`; the
    /// key id is the key's RFC 7638 thumbprint, so the device knows it without being told.
    func registerDebug(_ request: inout Request, context: Context) async throws -> Response {
        let now = clock()
        try await admin.authorize(request, source: context.clientAddress, now: now)
        guard configuration.allowDebugDevices else {
            throw SignetError(.trustLevelInsufficient, "this gateway takes no debug devices (allowDebugDevices)")
        }
        try request.requireJSONContent("a debug device")
        let body = try await request.collectBody(upTo: Self.maximumRegistrationBytes, refusing: "a debug device")
        let registration = try DebugDeviceRegistration(json: Array(buffer: body))
        let device = try registration.record(now: now)
        try await save(device)
        try await store.appendAudit(
            AuditRecord(at: now, actor: admin.token.actor, action: "device.debug.add", target: device.deviceID, source: context.clientAddress)
        )
        keyCache?.forget(device.keyID)
        metrics.record(outcome: "registered", reason: nil)
        return try JSONResponse.make(
            ["deviceId": device.deviceID, "keyid": device.keyID, "trustLevel": TrustLevel.debug.rawValue, "name": registration.name],
            status: .created
        )
    }
}

/// The body of `POST /signet/v1/devices/debug` (also the console's form).
public struct DebugDeviceRegistration: Sendable {
    /// Who the device is, for operators: "Ana's simulator", "CI".
    public let name: String
    public let algorithm: String
    public let key: VerificationKey

    public init(json bytes: [UInt8]) throws {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw SignetError(.malformedMessage, "the debug device is not a JSON object")
        }
        guard let name = object["name"] as? String else {
            throw SignetError(.malformedMessage, "name and publicKey are required")
        }
        try self.init(name: name, algorithm: object["alg"] as? String, key: try DeviceRegistration.publicKey(object["publicKey"]))
    }

    /// From a form: the public key as JWK JSON text or an SPKI PEM (the console's "Debug devices").
    ///
    /// - Parameters:
    ///   - name: Who the device is, 1 to 80 printable characters.
    ///   - text: The public key, a JWK or an SPKI PEM.
    public init(name: String, publicKeyText text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let key: VerificationKey
        if trimmed.hasPrefix("{") {
            key = try VerificationKey(jwk: try JWK(json: Array(trimmed.utf8)))
        } else if trimmed.hasPrefix("-----BEGIN") {
            key = try VerificationKey(pem: trimmed)
        } else {
            throw SignetError(.malformedMessage, "the public key is a JWK (JSON) or an SPKI PEM")
        }
        try self.init(name: name, key: key)
    }

    /// - Parameters:
    ///   - name: Who the device is, 1 to 80 printable characters.
    ///   - algorithm: By default the key type's (`ecdsa-p256-sha256` for P-256, `ed25519`).
    ///   - key: The device's public key.
    public init(name: String, algorithm: String? = nil, key: VerificationKey) throws {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard (1...80).contains(trimmed.count), trimmed.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) })
        else { throw SignetError(.malformedMessage, "a debug device's name is 1 to 80 printable characters") }
        let algorithm = algorithm ?? (key.type == .ed25519 ? "ed25519" : "ecdsa-p256-sha256")
        _ = try DeviceRegistration.algorithm(algorithm, for: key)
        self.name = trimmed
        self.algorithm = algorithm
        self.key = key
    }

    /// The device to store: trust level `debug`, its name kept as an attribute.
    public func record(now: Date) throws -> DeviceRecord {
        let (keyID, jwk) = try DeviceRegistration.stored(key, algorithm: algorithm)
        return DeviceRecord(
            deviceID: "dev_" + Nonce.random(),
            keyID: keyID,
            algorithm: algorithm,
            publicKeyJWK: jwk.jsonString,
            trustLevel: .debug,
            createdAt: now,
            attributes: ["debug_name": name]
        )
    }
}
