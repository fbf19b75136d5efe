// SPDX-License-Identifier: Apache-2.0
import ExampleScores
import Foundation
import SignetCore
import SignetServer
import SignetTestSupport
import Testing

/// The seeds' envelope made and opened by Python's `cryptography` and by the `signet` command.
@Suite(.awaitsCleanups) struct LegacyEnvelopeInteropTests {
    /// Python's `cryptography` seals and opens the same JSON envelope; the CLI does both directions.
    @Test(.enabled(if: PythonPeer.available("cryptography")))
    func pythonAndTheCommandLineAgreeOnTheJSONEnvelope() async throws {
        let harness = try await LegacyEnvelopeGatewayTests.start(.json)
        Cleanup.after { try await harness.stop() }
        let sealed = try await PythonPeer.run("envelope_peer.py", ["seal", Base64.encode(LegacyEnvelopeGatewayTests.secret), "1", #"{"name":"Py","score":3}"#])
        let answer = try await LegacyEnvelopeGatewayTests.post(Array(sealed.utf8), to: harness)
        #expect(answer.status == 201, "\(answer.text)")
        #expect(harness.backend.allEntries.map(\.name) == ["Py"])

        let folder = try SignetProcess.temporaryDirectory()
        let envelope = folder.appendingPathComponent("envelope.json")
        try Data(sealed.utf8).write(to: envelope)
        let opened = try await SignetProcess.signet(["envelope", "open", "--key-b64", Base64.encode(LegacyEnvelopeGatewayTests.secret), envelope.path])
        #expect(opened.status == 0 && opened.stdout == #"{"name":"Py","score":3}"#, "\(opened.stderr)")
        let plaintext = folder.appendingPathComponent("plain.txt")
        try Data("from the CLI".utf8).write(to: plaintext)
        let cliSealed = try await SignetProcess.signet(["envelope", "seal", "--key-b64", Base64.encode(LegacyEnvelopeGatewayTests.secret), plaintext.path])
        try #require(cliSealed.status == 0)
        #expect(try await PythonPeer.run("envelope_peer.py", ["open", Base64.encode(LegacyEnvelopeGatewayTests.secret), cliSealed.stdout]) == "from the CLI")

        // RNCryptor with a password through the CLI, both ways; a wrong password is exit 1.
        let rn = try await SignetProcess.signet(["envelope", "seal", "--format", "rncryptor", "--password-utf8", "pw", plaintext.path])
        try #require(rn.status == 0)
        #expect(RNCryptorV3.salts(of: Base64.decode(rn.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? []) != nil)
        let rnFile = folder.appendingPathComponent("message.rn")
        try Data(rn.stdout.utf8).write(to: rnFile)
        let rnOpened = try await SignetProcess.signet(["envelope", "open", "--format", "rncryptor", "--password-utf8", "pw", rnFile.path])
        #expect(rnOpened.status == 0 && rnOpened.stdout == "from the CLI", "\(rnOpened.stderr)")
        let wrong = try await SignetProcess.signet(["envelope", "open", "--format", "rncryptor", "--password-utf8", "nope", rnFile.path])
        #expect(wrong.status == 1 && wrong.stderr.contains("envelope_invalid"))
    }
}
