// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetCore

/// Where a command gets its HTTP message: a file in HTTP/1.1 text form, or options.
struct MessageOptions: ParsableArguments {
    @Option(name: [.customLong("request"), .customLong("message")], help: "HTTP/1.1 message file (- for stdin).")
    var request: String?

    @Option(help: "Method, when building the request from options.")
    var method: String?

    @Option(help: "Absolute URL, when building the request from options.")
    var url: String?

    @Option(name: .customLong("header"), help: "A header field \"Name: value\" (repeatable).")
    var headers: [String] = []

    @Option(help: "Body text, when building the request from options.")
    var body: String?

    @Option(help: "Body file, when building the request from options.")
    var bodyFile: String?

    @Option(help: "Scheme of an origin-form request (the message file does not carry one).")
    var scheme: String = "https"

    /// The message and the line ending to write it back with.
    func load() throws -> (message: HTTPMessage, lineEnding: String) {
        if let url {
            guard request == nil else { throw ValidationError("give either --request or --url, not both") }
            var fields = MessageFields()
            for header in headers {
                guard let colon = header.firstIndex(of: ":") else {
                    throw ValidationError("--header needs \"Name: value\"")
                }
                fields.append(
                    name: String(header[..<colon]),
                    value: String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
                )
            }
            var bodyBytes: [UInt8] = []
            if let body { bodyBytes = Array(body.utf8) }
            if let bodyFile { bodyBytes = try CLIInput.read(bodyFile) }
            if !bodyBytes.isEmpty, !fields.contains("content-length") {
                fields.append(name: "Content-Length", value: String(bodyBytes.count))
            }
            let message = try HTTPMessage.request(
                method: method ?? (bodyBytes.isEmpty ? "GET" : "POST"),
                uri: url,
                fields: fields,
                body: bodyBytes
            )
            return (message, "\r\n")
        }
        let bytes = try CLIInput.read(request)
        var codec = HTTP1MessageCodec()
        codec.defaultScheme = scheme
        let lineEnding = bytes.firstIndex(of: 0x0A).map { $0 > 0 && bytes[$0 - 1] == 0x0D } == true ? "\r\n" : "\n"
        return (try codec.decode(bytes), lineEnding)
    }

    /// The request a response answers, read with the same scheme (for `;req` components).
    func loadRelatedRequest(_ path: String) throws -> HTTPMessage {
        var codec = HTTP1MessageCodec()
        codec.defaultScheme = scheme
        return try codec.decode(try CLIInput.read(path))
    }
}
