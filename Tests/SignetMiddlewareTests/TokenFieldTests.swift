// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import SignetCore
@testable import SignetMiddleware
import Testing

/// What a token gate reads before any signature: the token's field, and its JWS header. Both are
/// read on every request to a token route, so they are read without Foundation's bridging to
/// `NSString` and `NSDictionary`; these hold them to what they read before.
struct TokenFieldTests {
    static func header(_ json: String, payload: String = "e30", signature: String = "c2ln") -> String {
        Base64.urlEncode(Array(json.utf8)) + "." + payload + "." + signature
    }

    @Test func theHeaderIsReadAsAJSONObject() throws {
        let header = try CompactJWTHeader(Self.header(#"{"alg":"ES256","kid":"k1","typ":"JWT","x":{"y":[1,2]}}"#))
        #expect(header.alg == "ES256" && header.kid == "k1" && header.typ == "JWT")
        // A member of another type reads as absent: the algorithm is then refused by whoever needs it.
        let numbers = try CompactJWTHeader(Self.header(#"{"alg":5,"kid":null}"#))
        #expect(numbers.alg == nil && numbers.kid == nil && numbers.typ == nil)
        // The type asked for, in any case.
        #expect(try CompactJWTHeader(Self.header(#"{"alg":"ES256","typ":"DPoP+JWT"}"#), type: "dpop+jwt").typ == "DPoP+JWT")
    }

    @Test(arguments: [
        #"{"alg":"ES256","crit":["exp"]}"#,  // an extension we do not know (RFC 7515 §4.1.11)
        #"{"alg":"ES256","crit":null}"#,  // named at all
        #"["ES256"]"#,  // not an object
        #""ES256""#,
        #"{"alg":"ES256""#,  // not JSON
        #"{"alg":"ES256","typ":"at+jwt"}"#,  // another type than JWT
    ])
    func aHeaderThatIsNotAPlainJWSHeaderIsRefused(_ json: String) {
        #expect(throws: SignetError.self) { try CompactJWTHeader(Self.header(json)) }
        do {
            _ = try CompactJWTHeader(Self.header(json))
        } catch let error as SignetError {
            #expect(error.code == .tokenInvalid, "\(json)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func aTokenThatIsNotThreePartsIsRefusedWithItsCode() {
        for token in ["a.b", "a.b.", Self.header("{}") + ".d", String(repeating: "a", count: 8193)] {
            do {
                _ = try CompactJWTHeader(token, refusing: .clientAttestationInvalid, "attestation")
                Issue.record("\(token.prefix(40)) was read")
            } catch let error as SignetError {
                #expect(error.code == .clientAttestationInvalid)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func aTokenFieldIsTrimmedOfOWSAndAnEmptyOneIsNoToken() throws {
        let name = HTTPField.Name("Signet-Token")!
        func fields(_ values: String...) -> HTTPFields {
            var fields = HTTPFields()
            for value in values { fields.append(HTTPField(name: name, value: value)) }
            return fields
        }
        #expect(try TokenAccessMiddleware<SignetRequestContext>.single(name, in: fields("a.b.c")) == "a.b.c")
        #expect(try TokenAccessMiddleware<SignetRequestContext>.single(name, in: fields(" \ta.b.c \t")) == "a.b.c")
        #expect(try TokenAccessMiddleware<SignetRequestContext>.single(name, in: fields(" ")) == nil)
        #expect(try TokenAccessMiddleware<SignetRequestContext>.single(name, in: HTTPFields()) == nil)
        #expect(throws: SignetError.self) { try TokenAccessMiddleware<SignetRequestContext>.single(name, in: fields("a", "b")) }
        var authorization = HTTPFields()
        authorization[.authorization] = "  DPoP a.b.c"
        #expect(TokenAccessMiddleware<SignetRequestContext>.scheme(of: authorization) == "dpop")
    }
}
