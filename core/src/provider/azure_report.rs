//! Azure's provisioning report to the wireserver. Without "Ready" the platform waits and
//! finally fails the VM; with "NotReady" and a reason the user sees why at once. "Ready"
//! is reported once per instance (`report_ready_once`); where the JSON health endpoint is
//! refused, the older goal-state protocol carries it (it has no way to carry a failure's
//! reason, so a failure is reported on the JSON endpoint only).

use core::fmt;

use super::azure::{self, HEALTH_PATH, READY, WIRESERVER_ADDRESS, WIRESERVER_HEADERS, WIRESERVER_HOST};
use crate::host::directory::Directory;
use crate::host::http::{Endpoint, ErrnoWords, Exchange, Explain, Failure, Http};
use crate::http::{self, Method, Request};
use crate::host::HostError;
use crate::retry::Timeouts;
use crate::state_files::AZURE_REPORTED;
use crate::text::{Decimal, Shown};

/// The goal state document the older protocol answers with.
pub const GOAL_STATE_LIMIT: usize = 16 * 1024;
const HEALTH_REPORT_LIMIT: usize = 2048;
// `HealthReportTooLarge` names the limit as a literal, not a number carried and formatted.
const _: () = assert!(HEALTH_REPORT_LIMIT == 2048);
const REQUEST_LIMIT: usize = 4096;
const RESPONSE_LIMIT: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportError<'b> {
    Request(http::Error),
    Wireserver(Failure),
    HealthRefused { status: u16 },
    GoalStateRefused { status: u16 },
    NoGoalState,
    /// Longer than `HEALTH_REPORT_LIMIT`.
    HealthReportTooLarge,
    HealthReportRefused { status: u16, incarnation: &'b [u8] },
}

impl Explain for ReportError<'_> {
    fn explain(&self, f: &mut fmt::Formatter<'_>, words: ErrnoWords) -> fmt::Result {
        match self {
            ReportError::Request(e) => fmt::Display::fmt(e, f),
            ReportError::Wireserver(failure) => {
                f.write_str("wireserver: ")?;
                failure.explain(f, words)
            }
            ReportError::HealthRefused { status } => write!(f, "provisioning/health answered {}", Decimal((*status).into())),
            ReportError::GoalStateRefused { status } => {
                write!(f, "provisioning/health refused, and the goal state answered {}", Decimal((*status).into()))
            }
            ReportError::NoGoalState => f.write_str("the goal state names no incarnation, container and instance"),
            ReportError::HealthReportTooLarge => f.write_str("health report larger than 2048 bytes"),
            ReportError::HealthReportRefused { status, incarnation } => write!(
                f,
                "the goal state health report answered {} (incarnation {})",
                Decimal((*status).into()),
                // parse_goal_state admits only letters, digits and "-._".
                Shown(incarnation)
            ),
        }
    }
}

/// What became of the once-per-instance "Ready".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ready<'g> {
    /// The record under TINY_CLOUD_VAR says this instance reported it already.
    AlreadyReported,
    /// Delivered (how) and remembered.
    Reported(&'static str),
    /// Delivered (how), but the record could not be written: the next boot reports again.
    NotRemembered(&'static str, HostError),
    Failed(ReportError<'g>),
}

/// "Ready", unless `var`'s record says this instance reported it; the record is written
/// once it was delivered, durable with the rest by the sync before the completion marker
/// (a crash before it costs one more "Ready" at the next boot, which Azure takes again). An unreadable record counts as none: reporting twice
/// is harmless, never reporting fails the VM.
pub fn report_ready_once<'g>(http: &mut dyn Http, var: &mut impl Directory, timeouts: &Timeouts, instance_id: &[u8], goal: &'g mut [u8]) -> Ready<'g> {
    let mut saved = [0u8; 256];
    if let Ok(Some(len)) = var.read(AZURE_REPORTED, &mut saved) {
        if already_reported(&saved[..len], instance_id) {
            return Ready::AlreadyReported;
        }
    }
    match report_ready(http, timeouts, goal) {
        Ok(how) => match var.write_volatile(AZURE_REPORTED, &ready_record(instance_id), 0o644) {
            Ok(()) => Ready::Reported(how),
            Err(e) => Ready::NotRemembered(how, e),
        },
        Err(e) => Ready::Failed(e),
    }
}

/// Whether `saved`, the record `ready_record` wrote, says Ready was reported for this
/// instance.
fn already_reported(saved: &[u8], instance_id: &[u8]) -> bool {
    saved.strip_suffix(b"\n") == Some(instance_id)
}

/// What to remember once Ready was reported: the instance-id, one line.
fn ready_record(instance_id: &[u8]) -> heapless::Vec<u8, 257> {
    let mut line = heapless::Vec::new();
    let _ = line.extend_from_slice(instance_id);
    let _ = line.push(b'\n');
    line
}

/// "Ready": how it was delivered.
fn report_ready<'g>(http: &mut dyn Http, timeouts: &Timeouts, goal: &'g mut [u8]) -> Result<&'static str, ReportError<'g>> {
    report(http, timeouts, READY, Some(goal))
}

/// "NotReady" with the reason provisioning failed.
pub fn report_failure(http: &mut dyn Http, timeouts: &Timeouts, reason: &[u8]) -> Result<&'static str, ReportError<'static>> {
    let mut body = [0u8; 512];
    let len = azure::not_ready(reason, &mut body).unwrap_or(0);
    report(http, timeouts, &body[..len], None)
}

/// The JSON health endpoint; when it is refused and `goal` is given (a Ready report),
/// the goal state, into `goal`, and its health report.
fn report<'g>(http: &mut dyn Http, timeouts: &Timeouts, body: &[u8], goal: Option<&'g mut [u8]>) -> Result<&'static str, ReportError<'g>> {
    let headers = [("Content-Type", "application/json")];
    let post = Request { method: Method::Post, host: WIRESERVER_HOST, path: HEALTH_PATH, headers: &headers, body };
    let mut response = [0u8; RESPONSE_LIMIT];
    let status = exchange(http, timeouts, &post, &mut response)?.0;
    if (200..300).contains(&status) {
        return Ok("provisioning/health");
    }
    let Some(goal) = goal else { return Err(ReportError::HealthRefused { status }) };
    let get = Request { method: Method::Get, host: WIRESERVER_HOST, path: azure::GOAL_STATE_PATH, headers: &WIRESERVER_HEADERS, body: b"" };
    let (status, body) = exchange(http, timeouts, &get, goal)?;
    let xml = &goal[body];
    if status != 200 {
        return Err(ReportError::GoalStateRefused { status });
    }
    let state = azure::parse_goal_state(xml).ok_or(ReportError::NoGoalState)?;
    let mut report = [0u8; HEALTH_REPORT_LIMIT];
    let len = azure::health_report(&state, &mut report).map_err(|_| ReportError::HealthReportTooLarge)?;
    let headers = [WIRESERVER_HEADERS[0], WIRESERVER_HEADERS[1], ("Content-Type", "text/xml; charset=utf-8")];
    let post = Request { method: Method::Post, host: WIRESERVER_HOST, path: azure::HEALTH_REPORT_PATH, headers: &headers, body: &report[..len] };
    let mut answer = [0u8; RESPONSE_LIMIT];
    match exchange(http, timeouts, &post, &mut answer)?.0 {
        200..=299 => Ok("goal state health report"),
        status => Err(ReportError::HealthReportRefused { status, incarnation: state.incarnation }),
    }
}

/// One request to the wireserver: the status and where the body lies in `response`.
fn exchange<'g>(http: &mut dyn Http, timeouts: &Timeouts, request: &Request<'_>, response: &mut [u8]) -> Result<(u16, core::ops::Range<usize>), ReportError<'g>> {
    let mut bytes = [0u8; REQUEST_LIMIT];
    let len = http::write_request(request, &mut bytes).map_err(ReportError::Request)?;
    let mut exchanges = [Exchange::new(&bytes[..len], response)];
    http.exchange_all(Endpoint::Tcp { address: WIRESERVER_ADDRESS, port: 80, privileged: false }, &mut exchanges, timeouts);
    exchanges[0].result().map_err(ReportError::Wireserver)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::http::{Cause, Endpoint};
    use crate::host::memory::{MemoryHost, MemoryNetwork};

    const HEALTH: &str = "POST /provisioning/health";
    const GOAL: &str = "GET /machine/?comp=goalstate";
    const REPORT: &str = "POST /machine?comp=health";
    const GOAL_STATE: &[u8] = b"<GoalState><Incarnation>3</Incarnation><Container><ContainerId>c-1</ContainerId><RoleInstanceList><RoleInstance><InstanceId>r-1</InstanceId></RoleInstance></RoleInstanceList></Container></GoalState>";

    #[test]
    fn a_report_too_large_names_the_limit() {
        let said = std::format!("{}", crate::host::explain::Worded(&ReportError::HealthReportTooLarge, crate::host::explain::errno_number));
        assert_eq!(said, "health report larger than 2048 bytes");
    }

    fn lines(network: &MemoryNetwork) -> Vec<String> {
        network.seen().iter().map(|seen| seen.line.clone()).collect()
    }

    #[test]
    fn ready_goes_to_the_json_health_endpoint() {
        let mut network = MemoryNetwork::new().serve(HEALTH, 200, b"");
        let mut goal = [0u8; GOAL_STATE_LIMIT];
        assert_eq!(report_ready(&mut network, &Timeouts::default(), &mut goal), Ok("provisioning/health"));
        let seen = network.seen();
        assert_eq!(lines(&network), [HEALTH]);
        assert_eq!(seen[0].endpoint, Endpoint::Tcp { address: [168, 63, 129, 16], port: 80, privileged: false });
        assert_eq!(seen[0].host, "168.63.129.16");
        assert_eq!(seen[0].body, br#"{"state":"Ready"}"#);
    }

    #[test]
    fn ready_refused_there_goes_through_the_goal_state() {
        let mut network = MemoryNetwork::new().serve(HEALTH, 404, b"").serve(GOAL, 200, GOAL_STATE).serve(REPORT, 200, b"");
        let mut goal = [0u8; GOAL_STATE_LIMIT];
        assert_eq!(report_ready(&mut network, &Timeouts::default(), &mut goal), Ok("goal state health report"));
        assert_eq!(lines(&network), [HEALTH, GOAL, REPORT]);
        let seen = network.seen();
        assert_eq!(seen[1].headers, ["x-ms-agent-name: wisp", "x-ms-version: 2012-11-30"]);
        let report = String::from_utf8(seen[2].body.clone()).unwrap();
        assert!(report.contains("<GoalStateIncarnation>3</GoalStateIncarnation>") && report.contains("<InstanceId>r-1</InstanceId>"), "{report}");
        // A refused report names the incarnation.
        let mut network = MemoryNetwork::new().serve(HEALTH, 404, b"").serve(GOAL, 200, GOAL_STATE).serve(REPORT, 410, b"");
        let error = report_ready(&mut network, &Timeouts::default(), &mut goal).unwrap_err();
        assert_eq!(error, ReportError::HealthReportRefused { status: 410, incarnation: b"3" });
        let words: ErrnoWords = |e, f| write!(f, "{e}");
        assert_eq!(format!("{}", crate::host::explain::Worded(&error, words)), "the goal state health report answered 410 (incarnation 3)");
    }

    #[test]
    fn a_goal_state_without_its_identifiers_is_an_error() {
        let mut network = MemoryNetwork::new().serve(HEALTH, 404, b"").serve(GOAL, 200, b"<GoalState/>");
        let mut goal = [0u8; GOAL_STATE_LIMIT];
        assert_eq!(report_ready(&mut network, &Timeouts::default(), &mut goal), Err(ReportError::NoGoalState));
        let mut network = MemoryNetwork::new().serve(HEALTH, 404, b"").serve(GOAL, 403, b"");
        assert_eq!(report_ready(&mut network, &Timeouts::default(), &mut goal), Err(ReportError::GoalStateRefused { status: 403 }));
    }

    #[test]
    fn a_failure_carries_its_reason_and_never_takes_the_goal_state_path() {
        let mut network = MemoryNetwork::new().serve(HEALTH, 200, b"");
        assert_eq!(report_failure(&mut network, &Timeouts::default(), b"main/set_ssh_keys: \"bad\""), Ok("provisioning/health"));
        let body = String::from_utf8(network.seen()[0].body.clone()).unwrap();
        assert!(body.contains("NotReady") && body.contains(r#"main/set_ssh_keys: \"bad\""#), "{body}");
        let mut network = MemoryNetwork::new().serve(HEALTH, 500, b"");
        let error = report_failure(&mut network, &Timeouts::default(), b"x").unwrap_err();
        assert!(matches!(error, ReportError::Wireserver(failure) if failure.cause == Cause::Status(500)), "{error:?}");
        let mut network = MemoryNetwork::new().serve(HEALTH, 404, b"");
        assert_eq!(report_failure(&mut network, &Timeouts::default(), b"x"), Err(ReportError::HealthRefused { status: 404 }));
        assert_eq!(lines(&network), [HEALTH]);
        let mut network = MemoryNetwork::new().fail(HEALTH, Cause::Connect(HostError { errno: 113 }));
        let words: ErrnoWords = |e, f| write!(f, "{e}");
        let error = report_failure(&mut network, &Timeouts::default(), b"x").unwrap_err();
        assert!(format!("{}", crate::host::explain::Worded(&error, words)).starts_with("wireserver: cannot connect: errno 113"));
    }

    #[test]
    fn ready_once_per_instance() {
        let record = ready_record(b"i-1");
        assert_eq!(&record[..], b"i-1\n");
        assert!(already_reported(&record, b"i-1"));
        assert!(!already_reported(&record, b"i-2"));
        assert!(!already_reported(b"i-1", b"i-1"));
        assert!(!already_reported(b"", b""));
    }

    #[test]
    fn ready_is_reported_then_remembered_and_not_reported_again() {
        let mut host = MemoryHost::new();
        let mut network = MemoryNetwork::new().serve(HEALTH, 200, b"");
        let mut goal = [0u8; GOAL_STATE_LIMIT];
        let ready = report_ready_once(&mut network, &mut host.dir("/var/lib/cloud"), &Timeouts::default(), b"i-1", &mut goal);
        assert_eq!(ready, Ready::Reported("provisioning/health"));
        assert_eq!(host.contents("/var/lib/cloud/.azure-reported"), Some(&b"i-1\n"[..]));
        assert_eq!(host.calls, ["read /var/lib/cloud/.azure-reported", "write_volatile /var/lib/cloud/.azure-reported"]);
        // The next boot of the same instance asks nothing of the wireserver.
        let mut network = MemoryNetwork::new();
        let ready = report_ready_once(&mut network, &mut host.dir("/var/lib/cloud"), &Timeouts::default(), b"i-1", &mut goal);
        assert_eq!(ready, Ready::AlreadyReported);
        assert!(network.seen().is_empty());
        // A new instance from the same image reports again.
        let mut network = MemoryNetwork::new().serve(HEALTH, 200, b"");
        let ready = report_ready_once(&mut network, &mut host.dir("/var/lib/cloud"), &Timeouts::default(), b"i-2", &mut goal);
        assert_eq!(ready, Ready::Reported("provisioning/health"));
        assert_eq!(host.contents("/var/lib/cloud/.azure-reported"), Some(&b"i-2\n"[..]));
    }

    #[test]
    fn a_failed_report_is_not_remembered_and_a_lost_record_is_said() {
        let mut host = MemoryHost::new();
        let mut network = MemoryNetwork::new().serve(HEALTH, 404, b"").serve(GOAL, 403, b"");
        let mut goal = [0u8; GOAL_STATE_LIMIT];
        let ready = report_ready_once(&mut network, &mut host.dir("/var"), &Timeouts::default(), b"i-1", &mut goal);
        assert_eq!(ready, Ready::Failed(ReportError::GoalStateRefused { status: 403 }));
        assert_eq!(host.contents("/var/.azure-reported"), None);
        // An unreadable record counts as none; an unwritable one is said.
        host.fail.insert(b"/var/.azure-reported".to_vec(), HostError { errno: 13 });
        let mut network = MemoryNetwork::new().serve(HEALTH, 200, b"");
        let ready = report_ready_once(&mut network, &mut host.dir("/var"), &Timeouts::default(), b"i-1", &mut goal);
        assert_eq!(ready, Ready::Reported("provisioning/health"));
        let mut network = MemoryNetwork::new().serve(HEALTH, 200, b"");
        let ready = report_ready_once(&mut network, &mut FullDisk(host.dir("/var")), &Timeouts::default(), b"i-3", &mut goal);
        assert_eq!(ready, Ready::NotRemembered("provisioning/health", HostError { errno: 28 }));
        assert_eq!(host.contents("/var/.azure-reported"), Some(&b"i-1\n"[..]));
    }

    /// A directory whose writes fail with ENOSPC.
    struct FullDisk<'h>(crate::host::memory::MemoryDir<'h>);

    impl Directory for FullDisk<'_> {
        fn exists(&mut self, name: &[u8]) -> Result<bool, HostError> {
            self.0.exists(name)
        }
        fn read(&mut self, name: &[u8], buf: &mut [u8]) -> Result<Option<usize>, HostError> {
            self.0.read(name, buf)
        }
        fn write_volatile(&mut self, _: &[u8], _: &[u8], _: u32) -> Result<(), HostError> {
            Err(HostError { errno: 28 })
        }
        fn remove(&mut self, name: &[u8]) -> Result<bool, HostError> {
            self.0.remove(name)
        }
        fn sync(&mut self) -> Result<(), HostError> {
            self.0.sync()
        }
    }
}
