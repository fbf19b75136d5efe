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
/// Creation is exclusive: the key is written to a private temporary file and linked into place,
/// which fails if the name exists. Several instances starting at once on one shared volume thus
/// all end up with the key one of them wrote, never each with its own.
enum PrivateKeyFile {
    /// The file's text; `make()`'s text, written with mode 0600, when there was no file.
    ///
    /// - Parameters:
    ///   - path: The key file.
    ///   - what: Names the key in errors ("the token signing key").
    ///   - make: A new key as PEM.
    static func loadOrCreate(_ path: String, what: String, make: () throws -> String) throws -> String {
        if let text = read(path) { return text }
        let temporary = path + ".\(ProcessInfo.processInfo.processIdentifier).\(UInt64.random(in: 0 ... .max)).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(try make().utf8), attributes: [.posixPermissions: 0o600])
        else { throw SignetError(.invalidKey, "cannot write \(what) next to \(path)") }
        defer { unlink(temporary) }
        if link(temporary, path) != 0, errno != EEXIST {
            throw SignetError(.invalidKey, "cannot create \(what) \(path): \(String(cString: strerror(errno)))")
        }
        guard let text = read(path) else { throw SignetError(.invalidKey, "cannot read \(what) \(path)") }
        return text
    }

    private static func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }
}
