// SPDX-License-Identifier: Apache-2.0
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the commands write to standard output, at once. A reader that has gone (`signet request …
/// | head`) ends the command quietly, as it ends `cat`: Foundation's non-throwing `write` stops the
/// process with a fatal error and a backtrace there, SIGPIPE being ignored (SwiftNIO ignores it).
enum StandardOutput {
    static func write(_ data: Data) {
        do {
            try FileHandle.standardOutput.write(contentsOf: data)
        } catch {
            // 128 + SIGPIPE: what a shell reports for a writer whose reader went away.
            exit(128 + SIGPIPE)
        }
    }
}
