// SPDX-License-Identifier: Apache-2.0

/// A command that could not do its job for a reason the user can fix: ArgumentParser prints
/// "Error: " and the message, without the usage banner a `ValidationError` adds (the arguments
/// were fine; a file or the network was not).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
