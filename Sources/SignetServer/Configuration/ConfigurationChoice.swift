// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A configuration value that is one of a fixed set of strings; a wrong one is refused naming the
/// allowed values (`routes[2].access: "device_key" is not one of open, verified, …`).
public protocol ConfigurationChoice: RawRepresentable<String>, CaseIterable, Codable {}

extension ConfigurationChoice {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(rawValue: text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "\(text.debugDescription) is not one of \(Self.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            )
        }
        self = value
    }
}
