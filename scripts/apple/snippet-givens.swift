// What the docs' Swift snippets take as given: declared before a snippet that uses one of these
// names without declaring it (scripts/apple/swift-snippets.py), with what they use in turn. One
// declaration per line, each after those it uses. Never run: only compiled.
func given<Value>() -> Value { fatalError("given: never run, only compiled") }
let privatePEM = ""
let publicPEM = ""
let json = "{\"score\":100}"
let body = Data()
let typed = ""
let trustPublicKeyPEM = ""
let shippedJWS = ""
let stateDirectory = FileManager.default.temporaryDirectory
let privateCA: [UInt8] = []
let livePin: SPKIPin = given()
let backupPin: SPKIPin = given()
let pins: PinSet = given()
let gatewayKey: VerificationKey = given()
let session: URLSession = given()
let configuration: SignetClientConfiguration = given()
let client: SignetClient = given()
let signer: any RequestSigning = given()
let request = URLRequest(url: URL(string: "https://api.example.com/scores")!)
actor PendingReports { var items: [[UInt8]] = []; func append(_ report: [UInt8]) { items.append(report) } }
let pendingReports = PendingReports()
