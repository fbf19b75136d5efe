// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation

/// Reading files and stdin, writing files, for the commands.
enum CLIInput {
    /// The bytes of `path`, or of stdin when `path` is `nil` or `-`.
    static func read(_ path: String?) throws -> [UInt8] {
        if path == nil || path == "-" {
            return Array(FileHandle.standardInput.readDataToEndOfFile())
        }
        guard let data = FileManager.default.contents(atPath: path!) else {
            throw ValidationError("cannot read \(path!)")
        }
        return Array(data)
    }

    static func readText(_ path: String) throws -> String {
        String(decoding: try read(path), as: UTF8.self)
    }

    /// `folder/name` without a doubled or leading `./` separator (`keys/` and `keys` give
    /// `keys/x`, `.` gives `x`), for the paths commands print.
    static func path(in folder: String, _ name: String) -> String {
        if folder == "." || folder.isEmpty { return name }
        return folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// A hash name as people write it: `SHA-256`, `sha_256` and `sha256` are one name (`sha256`).
    static func hashName(_ name: String) -> String {
        name.lowercased().filter { $0 != "-" && $0 != "_" }
    }

    /// Writes a new file; refuses to replace one unless `force`. Private files are readable by the owner only.
    static func write(_ text: String, to path: String, private isPrivate: Bool, force: Bool) throws {
        try write(Array(text.utf8), to: path, private: isPrivate, force: force)
    }

    /// Writes a new binary file, as ``write(_:to:private:force:)`` does text.
    static func write(_ bytes: [UInt8], to path: String, private isPrivate: Bool, force: Bool) throws {
        if FileManager.default.fileExists(atPath: path), !force {
            throw ValidationError("\(path) exists; pass --force to replace it")
        }
        let attributes: [FileAttributeKey: Any] = isPrivate ? [.posixPermissions: 0o600] : [:]
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: attributes) else {
            throw ValidationError("cannot write \(path)")
        }
    }
}

/// Standard error, for diagnostics that must not mix with the command's output.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
