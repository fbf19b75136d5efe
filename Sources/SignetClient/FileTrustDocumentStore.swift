// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

/// A ``TrustDocumentStore`` in a folder: `trust.jws`, written beside and renamed over.
public struct FileTrustDocumentStore: TrustDocumentStore {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    private var path: String { directory + "/trust.jws" }

    public func load() throws -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    public func save(_ document: String) throws {
        let files = FileManager.default
        try? files.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = path + ".\(UUID().uuidString)"
        guard files.createFile(atPath: temporary, contents: Data(document.utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw SignetError(.trustDocumentInvalid, "cannot write the trust document to \(directory)")
        }
        if rename(temporary, path) != 0 {
            try? files.removeItem(atPath: temporary)
            throw SignetError(.trustDocumentInvalid, "cannot replace the trust document in \(directory)")
        }
    }
}
