// SPDX-License-Identifier: Apache-2.0
import Foundation

/// The commands' `print`: each call is written at once, so output redirected to a file or a pipe
/// arrives as it is printed (C's `stdout` buffers it whole there: a redirected `signet demo`
/// looked hung for minutes) and in order with what ``StandardOutput`` writes.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator) + terminator
    StandardOutput.write(Data(text.utf8))
}
