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
        var parsed = 0
        var authenticatorData = 0
        let started = Date()
        for bytes in SeededMutations(seeds: seeds, count: iterations, seed: seed) {
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
}
