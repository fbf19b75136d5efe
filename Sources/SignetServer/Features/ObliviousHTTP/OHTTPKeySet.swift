// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetCore

/// The gateway's HPKE keys with their windows: which to publish and which may open a request now.
public struct OHTTPKeySet: Sendable {
    public struct Entry: Sendable {
        public var key: OHTTPGatewayKey
        public var notBefore: Date?
        public var notAfter: Date?

        public init(key: OHTTPGatewayKey, notBefore: Date? = nil, notAfter: Date? = nil) {
            self.key = key
            self.notBefore = notBefore
            self.notAfter = notAfter
        }

        func isActive(at time: Date) -> Bool {
            (notBefore.map { $0 <= time } ?? true) && (notAfter.map { time <= $0 } ?? true)
        }
    }

    public let entries: [Entry]

    public init(entries: [Entry]) {
        self.entries = entries
    }

    /// The keys inside their window at `time`: served at `/signet/v1/ohttp-keys` and tried on requests.
    public func active(at time: Date) -> [OHTTPGatewayKey] {
        entries.filter { $0.isActive(at: time) }.map(\.key)
    }

    /// The configured keys from their files, or — for a file that does not exist yet — a new key
    /// written to it (mode 0600), so every gateway instance sharing the files serves the same keys.
    ///
    /// - Parameters:
    ///   - configuration: The `ohttp` settings.
    ///   - mayCreate: Whether a missing file may be made (at a reload, only one the running gateway
    ///     does not use).
    public static func loadOrCreate(_ configuration: GatewayConfiguration.OHTTP, mayCreate: (String) -> Bool = { _ in true }) throws -> OHTTPKeySet {
        var entries: [Entry] = []
        for (index, key) in configuration.keys.enumerated() {
            let at = "ohttp.keys[\(index)].keyFile"
            // Created exclusively, as the token keys are: instances starting together share one.
            let text = try PrivateKeyFile.loadOrCreate(key.keyFile, what: "the OHTTP key", at: at, create: mayCreate(key.keyFile)) {
                (key.kem == .p256 ? OHTTPGatewayKey.PrivateKey.p256(.init()) : .x25519(.init())).pemRepresentation
            }
            let privateKey: OHTTPGatewayKey.PrivateKey
            do {
                privateKey = try OHTTPGatewayKey.PrivateKey(pem: text)
            } catch let error as SignetError {
                throw ConfigurationError(.file, at: at, "\(at): \(key.keyFile): \(error.reason)")
            }
            if let kem = key.kem, kem != privateKey.kem {
                throw ConfigurationError.invalid(at, "\(at): \(key.keyFile) holds a \(privateKey.kem.rawValue) key, the configuration says \(kem.rawValue)")
            }
            entries.append(
                Entry(
                    key: OHTTPGatewayKey(keyID: UInt8(key.keyId), privateKey: privateKey),
                    notBefore: key.notBefore,
                    notAfter: key.notAfter
                )
            )
        }
        return OHTTPKeySet(entries: entries)
    }
}

extension OHTTPGatewayKey.PrivateKey {
    var kem: GatewayConfiguration.OHTTP.KEM {
        switch self {
        case .x25519: .x25519
        case .p256: .p256
        }
    }
}
