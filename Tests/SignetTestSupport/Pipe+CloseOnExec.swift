// SPDX-License-Identifier: Apache-2.0
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Pipe {
    /// A pipe whose two ends no child inherits (only the end a `Process` hands it as 0, 1 or 2).
    ///
    /// Foundation's `Process` does not close the parent's other descriptors in the child, so with
    /// tests starting processes in parallel, a long-lived child (an `openssl s_server`, a gateway)
    /// could inherit the write end of another child's stdin or stdout: that child then never sees
    /// end-of-file, and its test waits for ever (seen: a `signet inspect` waiting on a stdin that an
    /// `s_server` held open, while the `s_server`'s test waited for it).
    public static func closedOnExec() -> Pipe {
        let pipe = Pipe()
        for descriptor in [pipe.fileHandleForReading.fileDescriptor, pipe.fileHandleForWriting.fileDescriptor] {
            _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
        }
        return pipe
    }
}
