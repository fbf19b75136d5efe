// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

/// The README's reason-code table names every code of the catalogue, and nothing else: a code added
/// to the catalogue without documentation (or documented and then removed) fails here.
@Suite struct ReasonCodeTableTests {
    @Test func theReadmeTableIsTheCatalogue() throws {
        // Tests/SignetCoreTests/ReasonCodeTableTests.swift → README.md at the repository root.
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## Reason codes\n").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        var documented: Set<String> = []
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let firstCell = line.dropFirst(2).prefix { $0 != "|" }
            for code in firstCell.split(separator: "`") where code.allSatisfy({ $0.isLowercase || $0 == "_" }) {
                documented.insert(String(code))
            }
        }
        let catalogue = Set(SignetError.Code.all.map(\.rawValue))
        #expect(catalogue.count == SignetError.Code.all.count, "a code is listed twice in the catalogue")
        #expect(documented.subtracting(catalogue).sorted() == [], "documented but not in the catalogue")
        #expect(catalogue.subtracting(documented).sorted() == [], "in the catalogue but not documented")
        #expect(documented.count >= 60)
    }
}
