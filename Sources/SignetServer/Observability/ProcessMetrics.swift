// SPDX-License-Identifier: Apache-2.0
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The process metrics Prometheus' client libraries export by convention (`process_*`), read from
/// `/proc/self` at each scrape; nothing where there is no `/proc` (macOS, where the gateway is
/// developed rather than run).
enum ProcessMetrics {
    static func exposition() -> String {
        #if os(Linux)
            // The command name is in parentheses and may hold any character: the fields follow the last `)`.
            guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
                let nameEnd = stat.lastIndex(of: ")")
            else { return "" }
            // Fields after the command name, from field 3 (state): utime is 14, stime 15, starttime 22.
            let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
            guard fields.count > 19, let user = Double(fields[11]), let system = Double(fields[12]),
                let started = Double(fields[19])
            else { return "" }
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
            let residentPages = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))
                .flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Double($0) } ?? 0
            // Less the descriptor that lists them.
            let openFiles = max(0, ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 1) - 1)
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            let bootTime = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8))?
                .split(separator: "\n").first { $0.hasPrefix("btime ") }
                .flatMap { Double($0.dropFirst("btime ".count)) } ?? 0
            return [
                ("process_cpu_seconds_total", "counter", (user + system) / ticks),
                ("process_resident_memory_bytes", "gauge", residentPages * pageSize),
                ("process_open_fds", "gauge", Double(openFiles)),
                ("process_max_fds", "gauge", Double(limit.rlim_cur)),
                ("process_start_time_seconds", "gauge", bootTime + started / ticks),
            ].map { name, type, value in
                "# TYPE \(name) \(type)\n\(name) \(value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value))\n"
            }.joined()
        #else
            return ""
        #endif
    }
}
