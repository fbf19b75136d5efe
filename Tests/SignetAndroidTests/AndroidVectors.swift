// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetAndroid

/// The repository's copy of the known-answer vectors (`Tests/Vectors`, provenance in its README).
enum AndroidVectors {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/android")

    static func chain(_ name: String) throws -> [[UInt8]] {
        try AndroidAttestationChain.derCertificates(pem: String(decoding: try Data(contentsOf: root.appendingPathComponent(name)), as: UTF8.self))
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: root.appendingPathComponent(name)))
    }

    /// 2024-01-01T00:00:00Z: inside every certificate of the TEE chain.
    static let teeTime = Date(timeIntervalSince1970: 1_704_067_200)
    /// 2023-03-01T00:00:00Z: inside every certificate of the attest-key chain.
    static let attestKeyTime = Date(timeIntervalSince1970: 1_677_628_800)
}
