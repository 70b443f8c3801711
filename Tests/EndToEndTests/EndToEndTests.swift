import Foundation
import Testing

/// The end-to-end tests: real services, broker, database and provider sandbox, all already running
/// (`deploy/local/services.sh start`). Every test makes its own app and users.
///
/// They run one at a time: the restart tests kill services, and a test running next to them would see
/// a refused connection or a duplicate push that is not its own business.
@Suite(.serialized, .timeLimit(.minutes(5)), .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs the running stack: run deploy/local/test.sh"))
struct EndToEndTests {}
