// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import SignetServer

@main
struct Signet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signet",
        abstract: "Sign and verify HTTP messages (RFC 9421), digests (RFC 9530), pins and seed-compatible MACs; run the gateway; send signed, pinned requests.",
        version: SignetVersion.current,
        subcommands: [
            KeygenCommand.self, SignCommand.self, VerifyCommand.self, DigestCommand.self, HMACCommand.self,
            PinCommand.self, ServeCommand.self, DemoCommand.self, InspectCommand.self, RequestCommand.self, RegisterCommand.self, ExampleUpstreamCommand.self,
            PKCS12Command.self, ObliviousCommand.self, EnvelopeCommand.self, TrustCommand.self, PasswdCommand.self,
            SimulatorCACommand.self,
        ]
    )
}
