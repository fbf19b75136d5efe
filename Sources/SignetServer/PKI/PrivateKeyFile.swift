// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A private key file the gateway creates on first start when it does not exist.
///
/// A file that cannot be read or written is the operator's to fix: a ``ConfigurationError`` at the
/// configuration key that names it.
///
/// Creation is exclusive: the key is written to a private temporary file and linked into place,
/// which fails if the name exists. Several instances starting at once on one shared volume thus
/// all end up with the key one of them wrote, never each with its own.
enum PrivateKeyFile {
    /// The file's text; `make()`'s text, written with mode 0600, when there was no file and
    /// `create` allows it (a reload creates only keys the running gateway does not use).
    ///
    /// - Parameters:
    ///   - path: The key file.
    ///   - what: Names the key in errors ("the token signing key").
    ///   - key: The configuration key that names the file (`tokens.keyFile`).
    ///   - create: Whether a missing file is made; when not, it is refused.
    ///   - make: A new key as PEM.
    static func loadOrCreate(_ path: String, what: String, at key: String, create: Bool = true, make: () throws -> String) throws -> String {
        if let text = read(path) { return text }
        guard create else { throw failure(key, "cannot read \(what) \(path)") }
        let temporary = path + ".\(ProcessInfo.processInfo.processIdentifier).\(UInt64.random(in: 0 ... .max)).tmp"
        // Created 0600 by open(2) itself: FileManager writes first and sets permissions after,
        // leaving the key readable by others (the umask's 0644) in between.
        let descriptor = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure(key, "cannot write \(what) next to \(path)") }
        defer { unlink(temporary) }
        let bytes = Array(try make().utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let closed = close(descriptor)
        guard written == bytes.count, closed == 0 else { throw failure(key, "cannot write \(what) next to \(path)") }
        if link(temporary, path) != 0, errno != EEXIST {
            throw failure(key, "cannot create \(what) \(path): \(String(cString: strerror(errno)))")
        }
        guard let text = read(path) else { throw failure(key, "cannot read \(what) \(path)") }
        return text
    }

    private static func failure(_ key: String, _ message: String) -> ConfigurationError {
        ConfigurationError(.file, at: key, "\(key): \(message)")
    }

    private static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
}
