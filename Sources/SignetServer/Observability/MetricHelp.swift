// SPDX-License-Identifier: Apache-2.0

/// The `# HELP` line of every metric family the gateway exposes: swift-metrics, through which
/// ``SignetMetrics`` records, has no place for one, so the exposition adds them by name.
enum MetricHelp {
    static let texts: [String: String] = [
        "signet_http_requests_total": "Requests answered, by route (a configured prefix or a Signet endpoint), status code and reason code.",
        "signet_http_request_duration_seconds": "The gateway's whole answer time, by route.",
        "signet_upstream_responses_total": "Answers from the upstream, by status code.",
        "signet_upstream_response_duration_seconds": "How long the upstream took to answer.",
        "signet_store_operation_duration_seconds": "Store operations on the request path (nonce_claim, device_lookup).",
        "signet_store_errors_total": "Store operations on the request path that failed, or were refused while the store was down.",
        "signet_store_failures_total": "Store operations that failed: timeout, error, or refused without asking a store that is down.",
        "signet_store_up": "1 while the store answers, 0 while the gateway takes it to be down.",
        "signet_nonce_claims_total": "Nonce claims, by result: claimed the first time, replayed after.",
        "signet_requests_total": "Requests by outcome (accepted, rejected, monitored, open, registered…) and reason code.",
        "signet_would_refuse_total": "Requests a monitor route forwarded that enforcing would refuse, by route and reason code.",
        "signet_verification_seconds": "Signature verification alone.",
        "signet_configuration_reloads_total": "Configuration reloads, by result: applied or refused.",
        "signet_build_info": "The Signet release this process runs (always 1).",
        "signet_configuration_info": "A hash of the configuration in force (always 1): an instance left on an old configuration shows another.",
        "process_cpu_seconds_total": "CPU time the process used, user and system.",
        "process_resident_memory_bytes": "Resident memory of the process.",
        "process_open_fds": "File descriptors the process has open.",
        "process_max_fds": "The process's limit on open file descriptors.",
        "process_start_time_seconds": "When the process started, in seconds since the Unix epoch.",
    ]

    /// `exposition` with a `# HELP` line before each family's `# TYPE` line that lacks one.
    static func annotate(_ exposition: String) -> String {
        var lines: [Substring] = []
        var previous: Substring = ""
        for line in exposition.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), !previous.hasPrefix("# HELP ") {
                let name = line.dropFirst("# TYPE ".count).prefix { $0 != " " }
                if let help = texts[String(name)] { lines.append("# HELP \(name) \(help)") }
            }
            lines.append(line)
            previous = line
        }
        return lines.joined(separator: "\n")
    }
}
