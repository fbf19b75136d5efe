// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a redirect of an app's own `URLSession` request is followed with
/// (``SignetURLSessionDelegate``): a signature covers `@target-uri`, so a signed request redirected
/// within its origins is signed again for its new target (a fresh nonce, a new `created`), or not
/// followed when there is no signer; one redirected to another origin is never followed.
enum SignedRedirect {
    /// The fields a signature adds; removed before signing again.
    static let signatureFields = ["Signature", "Signature-Input", "Content-Digest"]

    /// The request to follow the redirect with, or `nil`: the app then gets the redirect itself.
    static func next(_ request: URLRequest, origins: [Origin], signer: (any RequestSigning)?, now: Date) async -> URLRequest? {
        guard let url = request.url, let origin = try? Origin(url.absoluteString), origins.contains(origin) else {
            return nil
        }
        guard request.value(forHTTPHeaderField: "Signature") != nil || request.value(forHTTPHeaderField: "Signature-Input") != nil
        else { return request }
        guard let signer else { return nil }
        var unsigned = request
        for name in signatureFields { unsigned.setValue(nil, forHTTPHeaderField: name) }
        return try? await signer.sign(unsigned, now: now)
    }
}
