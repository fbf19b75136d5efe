// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The banking seed's envelope: a JSON object with the AES-256-CBC `payload`, its `iv` and a `mac`
/// (base64 each), and optionally the key `version`. The MAC is HMAC-SHA256 over the IV and the
/// ciphertext (encrypt-then-MAC) and is checked, in constant time, before anything is decrypted.
public enum JSONEnvelope {
    /// The JSON member names an app uses.
    public struct FieldNames: Sendable, Equatable {
        public var mac: String
        public var iv: String
        public var payload: String
        /// `nil`: the envelope names no version, and the first key is used.
        public var version: String?

        public init(mac: String = "mac", iv: String = "iv", payload: String = "payload", version: String? = "version") {
            self.mac = mac
            self.iv = iv
            self.payload = payload
            self.version = version
        }
    }

    /// The largest envelope read; the gateway bounds the body before this.
    public static let maximumBytes = 8 << 20

    public static func seal(
        _ plaintext: [UInt8],
        key: EnvelopeKey,
        names: FieldNames = FieldNames(),
        iv: [UInt8]? = nil
    ) throws -> [UInt8] {
        let iv = iv ?? EnvelopeKey.randomIV()
        let ciphertext = try key.encrypt(plaintext, iv: iv)
        var object: [String: String] = [
            names.iv: Base64.encode(iv),
            names.payload: Base64.encode(ciphertext),
            names.mac: Base64.encode(key.mac(iv, ciphertext)),
        ]
        if let version = names.version { object[version] = key.version }
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    /// Opens an envelope with the key its version names (or the first key).
    ///
    /// - Throws: `envelope_invalid` for every failure: not JSON, a member missing, bad base64, an
    ///   unknown version, a wrong MAC, bad padding.
    public static func open(_ json: [UInt8], keys: [EnvelopeKey], names: FieldNames = FieldNames()) throws
        -> (plaintext: [UInt8], key: EnvelopeKey)
    {
        guard json.count <= maximumBytes,
            let object = try? JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
            let mac = (object[names.mac] as? String).flatMap(Base64.decode),
            let iv = (object[names.iv] as? String).flatMap(Base64.decode), iv.count == 16,
            let ciphertext = (object[names.payload] as? String).flatMap(Base64.decode),
            !ciphertext.isEmpty, ciphertext.count % 16 == 0
        else { throw EnvelopeKey.invalid }
        let key: EnvelopeKey?
        if let versionName = names.version, let version = object[versionName] {
            let text = (version as? String) ?? (version as? NSNumber).map { "\($0)" }
            key = keys.first { $0.version == text }
        } else {
            key = keys.first
        }
        guard let key, ConstantTime.equals(key.mac(iv, ciphertext), mac) else { throw EnvelopeKey.invalid }
        return (try key.decrypt(ciphertext, iv: iv), key)
    }
}
