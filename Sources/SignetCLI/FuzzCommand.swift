// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Crypto
import Foundation
import SignetAppAttest
import SignetCore
import SignetSimulator

struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz-appattest",
        abstract: "Throw seeded random mutations of App Attest objects at the CBOR and authenticator-data parsers.",
        discussion: """
            Seeds: a simulated attestation and assertion, plus every *_attestation*/*_assertion* JSON fixture in \
            --fixtures. Each input is a seed with 1-4 mutations (a byte replaced, the tail cut, a byte inserted). \
            The run passes when no input traps; it prints how many parsed. Build with -c release.
            """
    )

    @Option(help: "How many inputs.")
    var iterations: Int = 1_000_000

    @Option(help: "Random seed (runs are reproducible).")
    var seed: UInt64 = 2021

    @Option(help: "A folder of App Attest JSON fixtures to add as seeds.")
    var fixtures: String?

    func run() throws {
        var seeds: [[UInt8]] = []
        let ca = try DevelopmentAttestationCA()
        let device = SimulatedAppAttestDevice(appID: "ABCDE12345.dev.signet.fuzz", ca: ca)
        seeds.append(try device.attest(clientDataHash: Array(SHA256.hash(data: Array("fuzz".utf8)))))
        seeds.append(try device.assertion(clientData: Array("fuzz".utf8)))
        if let fixtures {
            for name in try FileManager.default.contentsOfDirectory(atPath: fixtures) where name.hasSuffix(".json") {
                guard let data = FileManager.default.contents(atPath: fixtures + "/" + name),
                    let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
                else { continue }
                for key in ["attestation_b64", "assertion_b64"] {
                    if let text = object[key] as? String, let bytes = Base64.decode(text) ?? Base64.urlDecode(text) {
                        seeds.append(bytes)
                    }
                }
            }
        }
        var generator = SplitMix(state: seed)
        var parsed = 0
        var authenticatorData = 0
        let started = Date()
        for round in 0..<iterations {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<(1 + Int(generator.next() % 4)) {
                let index = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[index] = UInt8(truncatingIfNeeded: generator.next())
                case 1: bytes.removeSubrange(index...)
                default: bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: index)
                }
                if bytes.isEmpty { bytes = [0] }
            }
            guard let value = try? CBORDecoder().decode(bytes) else { continue }
            parsed += 1
            if let data = value[text: "authData"]?.bytes ?? value[text: "authenticatorData"]?.bytes,
                (try? AuthenticatorData(data)) != nil
            {
                authenticatorData += 1
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        print("\(iterations) inputs from \(seeds.count) seeds in \(String(format: "%.1f", elapsed)) s: no crash")
        print(
            "\(parsed) parsed as CBOR, \(authenticatorData) with valid authenticator data; the rest rejected with malformed_cbor"
        )
    }

    struct SplitMix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
