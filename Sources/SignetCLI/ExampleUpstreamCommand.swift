// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import ExampleScores
import Foundation
import Hummingbird
import Logging

/// `signet example-upstream`: the demo's high-score API on its own, knowing nothing of Signet — an
/// API to put the gateway in front of when trying it out (docs/quickstart.md).
struct ExampleUpstreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "example-upstream",
        abstract: "Run an example API (high scores, echo) to put the gateway in front of; Ctrl-C stops it.",
        discussion: """
            POST /scores stores {"name","score"} and answers it with the player the gateway named \
            (Signet-Device or Signet-Key-Id); GET /scores/top lists the best ten; GET or POST /echo/… answers \
            the method, path, header fields and body size it received.
            """
    )

    @Option(help: "Address to listen on.")
    var host: String = "127.0.0.1"

    @Option(help: "Port (0 picks one).")
    var port: Int = 9000

    func run() async throws {
        var logger = Logger(label: "signet.example-upstream")
        logger.logLevel = .warning
        let host = host
        try await ScoresBackend().application(host: host, port: port, logger: logger) { port in
            print("example upstream listening on http://\(host):\(port) (POST /scores, GET /scores/top, /echo/…)")
        }.runService()
    }
}
