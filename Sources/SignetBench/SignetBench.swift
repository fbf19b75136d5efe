// SPDX-License-Identifier: Apache-2.0
import ArgumentParser

/// Benchmarks and fuzzers, kept out of the shipped `signet` command. Build with `-c release`.
@main
struct SignetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signet-bench",
        abstract: "Measure Signet next to openssl and pass-through, and fuzz its parsers (release builds).",
        subcommands: [VerifyBenchCommand.self, GatewayBenchCommand.self, NonceBenchCommand.self, ConsoleBenchCommand.self, FuzzCommand.self],
        defaultSubcommand: VerifyBenchCommand.self
    )
}
