#!/usr/bin/env bash
# Signet's main job, end to end through the CLI: make a device key, sign a request, verify it, then
# show that tampered copies are rejected with their reason codes.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product signet >/dev/null
signet="$PWD/.build/release/signet"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

echo "== 1. A device key (Ed25519); its key id is the RFC 7638 thumbprint"
"$signet" keygen --alg ed25519 --out . --name device | tee keygen.txt
keyid=$(sed -n 's/^keyid: //p' keygen.txt)

echo; echo "== 2. The request the app sends"
printf 'POST /scores?game=1 HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\n\r\n{"name":"Gilgamesh","score":100}' > request.http
cat request.http; echo

echo; echo "== 3. Signed: Content-Digest, Signature-Input, Signature (RFC 9421 + RFC 9530)"
"$signet" sign --request request.http --key device.key.pem --keyid="$keyid" --nonce > signed.http
cat signed.http; echo

echo; echo "== 4. The server verifies it"
"$signet" verify --request signed.http --key device.pub.pem --keyid="$keyid" --require-nonce --max-age 300

echo; echo "== 5. A tampered score is rejected"
sed 's/"score":100/"score":999/' signed.http > tampered.http
"$signet" verify --request tampered.http --key device.pub.pem --keyid="$keyid" || echo "(exit $?)"

echo; echo "== 6. Recomputing the digest does not help: the signature covers it"
digest=$(printf '{"name":"Gilgamesh","score":999}' | "$signet" digest --alg sha256 --content-digest)
sed "s|^Content-Digest: .*|Content-Digest: $digest\r|" tampered.http > forged.http
"$signet" verify --request forged.http --key device.pub.pem --keyid="$keyid" || echo "(exit $?)"
