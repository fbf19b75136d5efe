// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetCore

extension FuzzTarget {
    /// DPoP proofs (RFC 9449) as the gateway reads them from the `DPoP` field, checked for RFC
    /// 9449's protected resource request at its own time.
    static let dpopProof = FuzzTarget(
        "dpop-proof",
        property: "a proof taken is signed by the jwk in its own header, is taken again the same, and never for another method or URI",
        seeds: { vectors in
            let proofs = try vectors.object("dpop/rfc9449.json")["proofs"] as? [[String: Any]] ?? []
            return proofs.compactMap { ($0["proof"] as? String).map { Array($0.utf8) } }
        },
        check: { bytes in
            guard let text = text(bytes) else { return }
            func verify(method: String = "GET", uri: String = Self.dpopURI) throws -> DPoPProof {
                try DPoPProof(
                    verifying: text,
                    method: method,
                    targetURI: uri,
                    accessToken: Self.dpopToken,
                    now: Date(timeIntervalSince1970: 1_562_262_620),
                    lifetime: 60,
                    clockSkew: 5
                )
            }
            guard let proof = try? verify() else { return }
            let again = try verify()
            try expect(again.thumbprint == proof.thumbprint && again.jti == proof.jti, "a proof read twice reads differently")
            let header = text.split(separator: ".", omittingEmptySubsequences: false).first.flatMap { Base64.urlDecode(String($0)) } ?? []
            let object = (try? JSONSerialization.jsonObject(with: Data(header))) as? [String: Any]
            let jwkJSON = (object?["jwk"]).flatMap { try? JSONSerialization.data(withJSONObject: $0) }
            let key = try jwkJSON.map { try VerificationKey(jwk: JWK(json: Array($0))) }
            try expect(try key?.jwk.thumbprint == proof.thumbprint, "the proof's thumbprint is not its header's jwk's")
            try expect((try? verify(method: "POST")) == nil, "a GET proof was taken for a POST")
            try expect((try? verify(uri: "https://resource.example.org/other")) == nil, "a proof was taken for another URI")
        }
    )

    static let dpopURI = "https://resource.example.org/protectedresource"
    static let dpopToken = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
}
