// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore
import SignetSimulator
import Testing

@testable import SignetAppAttest

@Suite struct CBORTests {
    @Test func decodesTheRFC8949Examples() throws {
        let decoder = CBORDecoder()
        #expect(try decoder.decode([0x00]) == .unsigned(0))
        #expect(try decoder.decode([0x18, 0x64]) == .unsigned(100))
        #expect(try decoder.decode([0x1B, 0, 0, 0, 0xE8, 0xD4, 0xA5, 0x10, 0]) == .unsigned(1_000_000_000_000))
        #expect(try decoder.decode([0x20]) == .negative(0))
        #expect(try decoder.decode([0x44, 1, 2, 3, 4]) == .bytes([1, 2, 3, 4]))
        #expect(try decoder.decode([0x62, 0x22, 0x5C]) == .text("\"\\"))
        #expect(try decoder.decode([0x83, 1, 2, 3]) == .array([.unsigned(1), .unsigned(2), .unsigned(3)]))
        #expect(
            try decoder.decode([0xA2, 0x61, 0x61, 1, 0x61, 0x62, 0x82, 2, 3])[text: "b"]
                == .array([.unsigned(2), .unsigned(3)])
        )
        #expect(try decoder.decode([0xF5]) == .bool(true))
        #expect(try decoder.decode([0xF6]) == .null)
    }

    @Test(
        arguments: [
            [0x5F, 0x41, 0x01, 0xFF],  // indefinite length
            [0x44, 1, 2],  // truncated
            [0x00, 0x00],  // trailing
            [0x9B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // absurd array length
            [0xA2, 0x01, 0x01, 0x01, 0x02],  // duplicate key
            [0x62, 0xC3, 0x28],  // invalid UTF-8
            [0xF9, 0x3C, 0x00],  // half float
            Array(repeating: 0x81, count: 20) + [0x00],  // too deep
        ] as [[UInt8]]
    )
    func rejectsWhatAppAttestNeverSends(_ bytes: [UInt8]) {
        let error = #expect(throws: SignetError.self) { try CBORDecoder().decode(bytes) }
        #expect(error?.code == .malformedCBOR)
    }

    /// A seeded mutation run over real objects: no input may trap (see docs/appattest.md for the
    /// libFuzzer run).
    @Test func mutatedRealObjectsNeverCrashTheParsers() throws {
        let seeds =
            AppAttestFixtureTests.attestations.map { $0.bytes("attestation_b64") }
            + AppAttestFixtureTests.assertions.map { $0.bytes("assertion_b64") }
        try #require(!seeds.isEmpty)
        var parsed = 0
        for bytes in SeededMutations(seeds: seeds, count: 20_000, seed: 2021) {
            if let value = try? CBORDecoder().decode(bytes) {
                parsed += 1
                if let authData = value[text: "authData"]?.bytes ?? value[text: "authenticatorData"]?.bytes {
                    _ = try? AuthenticatorData(authData)
                }
            }
        }
        #expect(parsed > 0)
    }
}
