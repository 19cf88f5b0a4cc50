//! cloud-init's status documents, version 1: `status.json`, rewritten as each stage starts
//! and ends, and `result.json`, whose existence tells `cloud-init status --wait` (which
//! Packer, Terraform and CI scripts call) that the boot is over. wisp's phases stand for
//! cloud-init's four stages.

use crate::config::Cloud;
use crate::host::directory::Directory;
use crate::host::messages::Messages;
use crate::json::{self, JsonError, JsonText};
use crate::out::{Full, Out};
use crate::phase::{Failed, Phase};
use crate::text::{Decimal, Plain};

/// cloud-init's stage for each phase.
pub const fn stage_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Boot => "init-local",
        Phase::Early => "init",
        Phase::Main => "modules-config",
        Phase::Final => "modules-final",
    }
}

/// cloud-init's class name for the datasource of `cloud`; `cloud-init status` shows it
/// lower-cased without the prefix ("ec2").
pub const fn datasource(cloud: Cloud) -> Option<&'static str> {
    Some(match cloud {
        Cloud::Auto => return None,
        Cloud::Aws => "DataSourceEc2",
        Cloud::Azure => "DataSourceAzure",
        Cloud::Gcp => "DataSourceGCE",
        Cloud::Oci => "DataSourceOracle",
        Cloud::Nocloud => "DataSourceNoCloud",
        Cloud::Configdrive => "DataSourceConfigDrive",
        Cloud::Openstack => "DataSourceOpenStack",
        Cloud::Hetzner => "DataSourceHetzner",
        Cloud::Digitalocean => "DataSourceDigitalOcean",
        Cloud::Scaleway => "DataSourceScaleway",
        Cloud::Incus => "DataSourceLXD",
        Cloud::Vultr => "DataSourceVultr",
    })
}

/// A stage's errors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Errors<'a> {
    #[default]
    None,
    /// The `errors` array of an earlier document, an array of strings copied as it is.
    Earlier(JsonText<'a>),
    /// One error per line (a phase goes on past a failed action, so it may have several).
    Lines(&'a str),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stage<'a> {
    /// Milliseconds since the epoch; written as seconds with a fraction, as cloud-init does.
    pub start_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    pub errors: Errors<'a>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status<'a> {
    pub datasource: Option<&'static str>,
    /// The stage running now, if any.
    pub running: Option<Phase>,
    /// In phase order.
    pub stages: [Stage<'a>; 4],
}

impl<'a> Status<'a> {
    /// Takes the stages of an earlier `status.json`; its `stage` and `datasource` are the
    /// writer's to set again. On an error, the stages read so far are kept.
    pub fn read(&mut self, document: &'a [u8]) -> Result<(), JsonError> {
        let Some(v1) = JsonText::find(document, &["v1"])? else { return Ok(()) };
        let v1 = v1.object()?;
        for (phase, record) in Phase::ALL.into_iter().zip(&mut self.stages) {
            let Some(stage) = v1.get(stage_name(phase)) else { continue };
            let stage = stage.object()?;
            let time = |name| stage.get(name).and_then(|v| seconds_to_ms(v.text));
            record.start_ms = time("start");
            record.finished_ms = time("finished");
            if let Some(list) = stage.get("errors") {
                if has_elements(list)? {
                    record.errors = Errors::Earlier(list);
                }
            }
        }
        Ok(())
    }

    /// What failed in the stages before `phase`, from their errors' `phase/action:`.
    pub fn failed_before(&self, phase: Phase) -> Failed {
        let mut failed = Failed::default();
        for stage in &self.stages[..phase as usize] {
            match stage.errors {
                Errors::None => {}
                Errors::Lines(messages) => messages.split('\n').for_each(|line| failed.add_message(line.as_bytes())),
                Errors::Earlier(list) => {
                    if let Ok(mut elements) = list.elements() {
                        while let Some(element) = elements.next_element() {
                            // The names come first and need no escapes; the quote goes.
                            failed.add_message(element.text.get(1..).unwrap_or(b""));
                        }
                    }
                }
            }
        }
        failed
    }

    pub fn has_errors(&self) -> bool {
        self.stages.iter().any(|stage| stage.errors != Errors::None)
    }

    /// Whether an update of `phase` goes on from the document the earlier phases of this
    /// boot wrote: all do but the boot phase's start, which begins a new record, as
    /// cloud-init's init-local does (a later phase may run alone, as its own process).
    pub fn continues_record(phase: Phase, finishing: bool) -> bool {
        phase != Phase::Boot || finishing
    }

    /// `phase` starts at `now`: the stage afresh, and the running one.
    pub fn start(&mut self, phase: Phase, now: Option<u64>) {
        self.stages[phase as usize] = Stage { start_ms: now, finished_ms: None, errors: Errors::None };
        self.running = Some(phase);
    }

    /// `phase` ends at `now`, with the reason it failed, if it did (one line per error).
    pub fn finish(&mut self, phase: Phase, now: Option<u64>, failure: Option<&'a str>) {
        let stage = &mut self.stages[phase as usize];
        stage.start_ms = stage.start_ms.or(now);
        stage.finished_ms = now;
        stage.errors = failure.map_or(Errors::None, Errors::Lines);
    }

    /// Whether `result.json` is written once `phase` finished: at the final phase's end,
    /// and at any failure, so that `cloud-init status --wait` ends.
    pub fn result_due(&self, phase: Phase) -> bool {
        phase == Phase::Final || self.has_errors()
    }

    /// `status.json`.
    pub fn write(&self, out: &mut Out<'_>) -> Result<(), Full> {
        self.put_datasource(out)?;
        put_name(out, b", \"stage\": ", self.running.map(stage_name))?;
        for phase in Phase::ALL {
            let stage = &self.stages[phase as usize];
            out.put_all(&[b", \"", stage_name(phase).as_bytes(), b"\": {\"errors\": ["])?;
            put_errors(out, &stage.errors, true)?;
            put_seconds(out, b"], \"recoverable_errors\": {}, \"start\": ", stage.start_ms)?;
            put_seconds(out, b", \"finished\": ", stage.finished_ms)?;
            out.put(b"}")?;
        }
        out.put(b"}}\n")
    }

    /// `result.json`: every stage's errors in one list.
    pub fn write_result(&self, out: &mut Out<'_>) -> Result<(), Full> {
        self.put_datasource(out)?;
        out.put(b", \"errors\": [")?;
        let mut first = true;
        for stage in &self.stages {
            if stage.errors != Errors::None {
                put_errors(out, &stage.errors, first)?;
                first = false;
            }
        }
        out.put(b"]}}\n")
    }

    /// Both documents' start.
    fn put_datasource(&self, out: &mut Out<'_>) -> Result<(), Full> {
        put_name(out, b"{\"v1\": {\"datasource\": ", self.datasource)
    }
}

/// The documents' names in their directory (`/run/cloud-init`).
pub const STATUS_FILE: &str = "status.json";
pub const RESULT_FILE: &str = "result.json";
/// Largest document: four stages of one error line each, escaped, fit with room to spare.
pub const DOCUMENT_LIMIT: usize = 16 * 1024;
/// The caller's room for the document read back and the one written (`record`'s):
/// mapped, touched only as far as they fill it, where on the stack both were probed whole
/// on entry by every record of every phase.
pub const ROOM: usize = 2 * DOCUMENT_LIMIT;

/// Records in `dir` that `phase` started (`end` is `None`) or ended (with the reason
/// it failed, if it did) at `now`. A start removes the result of an earlier run first,
/// so a reader never sees it beside a stage that has not finished; the final phase's
/// end, and any failure, also write `result.json`, which ends `cloud-init status
/// --wait`. A damaged `status.json` is started afresh.
///
/// Returns what failed in this boot's phases before `phase`, as the document recorded
/// them: a phase run alone (as the service scripts run them) knows what the earlier ones
/// left undone. The boot phase starts the record, so it has nothing before it. `room`
/// holds the documents (`ROOM` bytes).
#[inline(never)]
pub fn record<H: Messages>(dir: &mut impl Directory, host: &H, room: &mut [u8], phase: Phase, cloud: Option<Cloud>, end: Option<Option<&str>>, now: Option<u64>) -> Result<Failed, H::Text> {
    let (earlier, buf) = room.split_at_mut(DOCUMENT_LIMIT);
    let mut status = Status::default();
    if Status::continues_record(phase, end.is_some()) {
        if let Ok(Some(len)) = dir.read(STATUS_FILE.as_bytes(), earlier) {
            if status.read(&earlier[..len]).is_err() {
                status = Status::default();
            }
        }
    }
    let failed = status.failed_before(phase);
    status.datasource = cloud.and_then(datasource);
    match end {
        None => {
            dir.remove(RESULT_FILE.as_bytes()).map_err(|e| host.text(format_args!("cannot remove {}: {}", Plain(RESULT_FILE), H::reason(e))))?;
            status.start(phase, now);
        }
        Some(failure) => status.finish(phase, now, failure),
    }
    write_document(dir, host, &status, false, buf)?;
    if end.is_some() && status.result_due(phase) {
        write_document(dir, host, &status, true, buf)?;
    }
    Ok(failed)
}

fn write_document<M: Messages>(dir: &mut impl Directory, messages: &M, status: &Status<'_>, result: bool, buf: &mut [u8]) -> Result<(), M::Text> {
    let name = if result { RESULT_FILE } else { STATUS_FILE };
    let mut out = Out::new(buf);
    let rendered = if result { status.write_result(&mut out) } else { status.write(&mut out) };
    rendered.map_err(|e| messages.text(format_args!("{} longer than {} bytes", Plain(name), Decimal(e.limit as u64))))?;
    dir.write_volatile(name.as_bytes(), out.written(), 0o644).map_err(|e| messages.text(format_args!("cannot write {}: {}", Plain(name), M::reason(e))))
}

/// Whether the `errors` list of a `result.json` has any.
pub fn result_has_errors(document: &[u8]) -> Result<bool, JsonError> {
    let errors = JsonText::find(document, &["v1", "errors"])?;
    has_elements(errors.ok_or(JsonError::WrongType { expected: json::Expected::ObjectWithErrors })?)
}

/// Whether an array of strings has any element; an element of another type is an error,
/// since `cloud-init status` joins them as strings.
fn has_elements(list: JsonText<'_>) -> Result<bool, JsonError> {
    let mut elements = list.elements()?;
    let mut any = false;
    while let Some(element) = elements.next_element() {
        if element.text.first() != Some(&b'"') {
            return Err(JsonError::WrongType { expected: json::Expected::String });
        }
        any = true;
    }
    Ok(any)
}

/// The elements of `errors`, comma-separated, with a leading comma unless `first`.
fn put_errors(out: &mut Out<'_>, errors: &Errors<'_>, first: bool) -> Result<(), Full> {
    let comma = if first { &b""[..] } else { b", " };
    match *errors {
        Errors::None => Ok(()),
        Errors::Lines(messages) => {
            let mut separator = comma;
            for message in messages.split('\n').filter(|line| !line.is_empty()) {
                out.put(separator)?;
                json::put_string(out, message)?;
                separator = b", ";
            }
            Ok(())
        }
        // Checked to be an array of strings when read.
        Errors::Earlier(list) => {
            let mut separator = comma;
            if let Ok(mut elements) = list.elements() {
                while let Some(element) = elements.next_element() {
                    out.put_all(&[separator, element.text])?;
                    separator = b", ";
                }
            }
            Ok(())
        }
    }
}

/// `label`, then a name as a JSON string or `null`.
fn put_name(out: &mut Out<'_>, label: &[u8], name: Option<&str>) -> Result<(), Full> {
    out.put(label)?;
    match name {
        Some(name) => json::put_string(out, name),
        None => out.put(b"null"),
    }
}

/// `label`, then seconds with three decimals or `null`.
fn put_seconds(out: &mut Out<'_>, label: &[u8], ms: Option<u64>) -> Result<(), Full> {
    out.put(label)?;
    let Some(ms) = ms else { return out.put(b"null") };
    out.put_decimal(ms / 1000)?;
    let digit = |place: u64| b'0' + (ms / place % 10) as u8;
    out.put(&[b'.', digit(100), digit(10), digit(1)])
}

/// A JSON number of seconds such as `1700000000.25`, as milliseconds; other forms
/// (exponents, signs) are not written by wisp or cloud-init and read as no time.
fn seconds_to_ms(text: &[u8]) -> Option<u64> {
    let (whole, fraction) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    let mut ms = crate::text::decimal(whole, 12)? * 1000;
    if !fraction.is_empty() {
        crate::text::decimal(fraction, 19)?;
    }
    for (place, &digit) in [100, 10, 1].iter().zip(fraction) {
        ms += place * u64::from(digit - b'0');
    }
    Some(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(write: impl FnOnce(&mut Out<'_>) -> Result<(), Full>) -> String {
        let mut buf = [0u8; 2048];
        let mut out = Out::new(&mut buf);
        write(&mut out).unwrap();
        String::from_utf8(out.written().to_vec()).unwrap()
    }

    const STAGE_NULL: &str = r#"{"errors": [], "recoverable_errors": {}, "start": null, "finished": null}"#;

    #[test]
    fn a_boot_of_four_phases_and_a_phase_run_alone() {
        assert!(!Status::continues_record(Phase::Boot, false));
        assert!(Status::continues_record(Phase::Boot, true) && Status::continues_record(Phase::Main, false));
        let mut status = Status::default();
        status.start(Phase::Boot, Some(1));
        assert_eq!(status.running, Some(Phase::Boot));
        status.finish(Phase::Boot, Some(2), None);
        assert!(!status.result_due(Phase::Boot));
        status.start(Phase::Main, Some(3));
        status.finish(Phase::Main, Some(4), Some("main/set_hostname: bad"));
        assert_eq!(status.stages[2], Stage { start_ms: Some(3), finished_ms: Some(4), errors: Errors::Lines("main/set_hostname: bad") });
        // A failure ends `status --wait` at once; the final phase runs alone from it.
        assert!(status.result_due(Phase::Main));
        let failed = status.failed_before(Phase::Final);
        assert!(failed.contains(crate::phase::Action::SetHostname));
        // A stage that finishes without having been seen to start takes its end as start.
        let mut alone = Status::default();
        alone.finish(Phase::Final, Some(9), None);
        assert_eq!(alone.stages[3].start_ms, Some(9));
        assert!(alone.result_due(Phase::Final));
    }

    #[test]
    fn running_then_failed() {
        let mut status = Status { datasource: datasource(Cloud::Aws), running: Some(Phase::Early), ..Status::default() };
        status.stages[0] = Stage { start_ms: Some(1_700_000_000_005), finished_ms: Some(1_700_000_000_250), errors: Errors::None };
        status.stages[1].start_ms = Some(1_700_000_001_000);
        let expected = format!(
            r#"{{"v1": {{"datasource": "DataSourceEc2", "stage": "init", "init-local": {{"errors": [], "recoverable_errors": {{}}, "start": 1700000000.005, "finished": 1700000000.250}}, "init": {{"errors": [], "recoverable_errors": {{}}, "start": 1700000001.000, "finished": null}}, "modules-config": {STAGE_NULL}, "modules-final": {STAGE_NULL}}}}}
"#
        );
        assert_eq!(written(|out| status.write(out)), expected);
        assert!(!status.has_errors());
        assert_eq!(written(|out| status.write_result(out)), "{\"v1\": {\"datasource\": \"DataSourceEc2\", \"errors\": []}}\n");

        status.running = None;
        status.stages[1].finished_ms = Some(1_700_000_002_000);
        status.stages[1].errors = Errors::Lines("early/save_userdata: \"x\\y\"\t\nearly/userdata_boothooks: z\n");
        assert!(status.has_errors());
        assert_eq!(
            written(|out| status.write_result(out)),
            "{\"v1\": {\"datasource\": \"DataSourceEc2\", \"errors\": [\"early/save_userdata: \\\"x\\\\y\\\"\\u0009\", \"early/userdata_boothooks: z\"]}}\n"
        );
        let failed = status.failed_before(Phase::Main);
        assert!(failed.contains(crate::phase::Action::SaveUserdata) && failed.contains(crate::phase::Action::UserdataBoothooks));
        assert!(!status.failed_before(Phase::Early).any());
    }

    #[test]
    fn read_back_and_rewritten() {
        let mut status = Status { datasource: None, ..Status::default() };
        status.stages[0] = Stage { start_ms: Some(1_000), finished_ms: Some(2_500), errors: Errors::Lines("boot: a") };
        status.stages[2] = Stage { start_ms: Some(3_000), finished_ms: None, errors: Errors::Lines("main/set_hostname: b") };
        let document = written(|out| status.write(out));
        assert!(document.starts_with("{\"v1\": {\"datasource\": null, \"stage\": null, "));
        let mut read = Status::default();
        read.read(document.as_bytes()).unwrap();
        assert_eq!(read.running, None);
        assert_eq!(read.stages[0].start_ms, Some(1_000));
        assert_eq!(read.stages[0].finished_ms, Some(2_500));
        assert_eq!(read.stages[1], Stage::default());
        assert_eq!(read.stages[2].finished_ms, None);
        assert_eq!(written(|out| read.write(out)), document);
        let result = written(|out| read.write_result(out));
        assert_eq!(result, "{\"v1\": {\"datasource\": null, \"errors\": [\"boot: a\", \"main/set_hostname: b\"]}}\n");
        // Read back from the document, the errors still name what failed.
        let failed = read.failed_before(Phase::Final);
        assert!(failed.contains(crate::phase::Action::SetHostname) && failed.any());
        assert!(!read.failed_before(Phase::Early).contains(crate::phase::Action::SetHostname));
        assert_eq!(result_has_errors(result.as_bytes()), Ok(true));
        assert_eq!(result_has_errors(b"{\"v1\": {\"datasource\": null, \"errors\": []}}"), Ok(false));
    }

    #[test]
    fn documents_of_cloud_init_itself() {
        // As cloud-init 22.4 writes them: time.time() floats, keys sorted, two-space indent.
        let document = br#"{
  "v1": {
    "datasource": "DataSourceNoCloud [seed=/dev/sr0][dsmode=net]",
    "init": {"errors": ["one", "two"], "finished": 1700000001.7351234, "start": 1700000001.5},
    "init-local": {"errors": [], "finished": 1700000000, "start": 1699999999.01},
    "modules-config": {"errors": [], "finished": null, "start": null},
    "stage": "modules-final"
  }
}"#;
        let mut read = Status::default();
        read.read(document).unwrap();
        assert_eq!(read.stages[0].start_ms, Some(1_699_999_999_010));
        assert_eq!(read.stages[0].finished_ms, Some(1_700_000_000_000));
        assert_eq!(read.stages[1].finished_ms, Some(1_700_000_001_735));
        assert_eq!(read.stages[3], Stage::default());
        assert_eq!(written(|out| read.write_result(out)), "{\"v1\": {\"datasource\": null, \"errors\": [\"one\", \"two\"]}}\n");
    }

    #[test]
    fn refused() {
        let read = |document: &'static [u8]| {
            let mut status = Status::default();
            status.read(document).map(|()| status)
        };
        assert!(read(b"{\"v1\": {\"init\": {\"errors\": [1]}}}").is_err());
        assert!(read(b"{\"v1\": {\"init\": []}}").is_err());
        assert!(read(b"not json").is_err());
        assert_eq!(read(b"{}").unwrap(), Status::default());
        assert_eq!(result_has_errors(b"{\"v1\": {}}"), Err(JsonError::WrongType { expected: json::Expected::ObjectWithErrors }));
        assert_eq!(result_has_errors(b"{\"v1\": {\"errors\": [2]}}"), Err(JsonError::WrongType { expected: json::Expected::String }));
        assert_eq!(seconds_to_ms(b"1e9"), None);
        assert_eq!(seconds_to_ms(b"-1"), None);
        assert_eq!(seconds_to_ms(b"1."), Some(1000));
        let mut small = [0u8; 40];
        assert_eq!(Status::default().write(&mut Out::new(&mut small)), Err(Full { limit: 40 }));
    }

    #[test]
    fn names() {
        let stages: Vec<_> = Phase::ALL.iter().map(|&phase| stage_name(phase)).collect();
        assert_eq!(stages, ["init-local", "init", "modules-config", "modules-final"]);
        assert_eq!(datasource(Cloud::Gcp), Some("DataSourceGCE"));
        assert_eq!(datasource(Cloud::Auto), None);
    }

    /// The documents of `/run/cloud-init` after each step, and what each step returned.
    #[test]
    fn a_boot_recorded_phase_by_phase_as_separate_runs() {
        use crate::host::memory::{MemoryDir, MemoryHost, MemorySystem};
        fn record(dir: &mut MemoryDir<'_>, phase: Phase, cloud: Option<Cloud>, end: Option<Option<&str>>, now: Option<u64>) -> Result<Failed, String> {
            super::record(dir, &MemorySystem::new(MemoryHost::new()), &mut [0; ROOM], phase, cloud, end, now)
        }
        let mut host = MemoryHost::new().with_file("/run/cloud-init/result.json", b"{\"v1\": {\"errors\": []}}");
        let mut dir = host.dir("/run/cloud-init");
        // The boot phase starts afresh: the result of the last boot goes first.
        assert_eq!(record(&mut dir, Phase::Boot, None, None, Some(1_000)), Ok(Failed::default()));
        assert_eq!(record(&mut dir, Phase::Boot, Some(Cloud::Aws), Some(None), Some(2_000)), Ok(Failed::default()));
        assert!(host.contents("/run/cloud-init/result.json").is_none());
        let status = String::from_utf8(host.contents("/run/cloud-init/status.json").unwrap().to_vec()).unwrap();
        assert!(status.contains("\"init-local\": {\"errors\": [], \"recoverable_errors\": {}, \"start\": 1.000, \"finished\": 2.000}"), "{status}");
        assert!(status.contains("DataSourceEc2"), "{status}");
        // A failed phase writes the result at once; the next phase, run alone, learns
        // what failed from the document.
        let mut dir = host.dir("/run/cloud-init");
        record(&mut dir, Phase::Early, Some(Cloud::Aws), None, Some(3_000)).unwrap();
        record(&mut dir, Phase::Early, Some(Cloud::Aws), Some(Some("early/save_userdata: refused")), Some(4_000)).unwrap();
        let result = String::from_utf8(host.contents("/run/cloud-init/result.json").unwrap().to_vec()).unwrap();
        assert!(result.contains("early/save_userdata: refused"), "{result}");
        let mut dir = host.dir("/run/cloud-init");
        let failed = record(&mut dir, Phase::Main, Some(Cloud::Aws), None, Some(5_000)).unwrap();
        assert!(failed.contains(crate::phase::Action::SaveUserdata));
        // Starting removed the early failure's result; the final phase writes it again.
        assert!(host.contents("/run/cloud-init/result.json").is_none());
        let mut dir = host.dir("/run/cloud-init");
        record(&mut dir, Phase::Main, Some(Cloud::Aws), Some(None), Some(6_000)).unwrap();
        record(&mut dir, Phase::Final, Some(Cloud::Aws), None, Some(7_000)).unwrap();
        record(&mut dir, Phase::Final, Some(Cloud::Aws), Some(None), Some(8_000)).unwrap();
        let result = String::from_utf8(host.contents("/run/cloud-init/result.json").unwrap().to_vec()).unwrap();
        assert!(result.contains("early/save_userdata: refused"), "{result}");
        assert_eq!(result_has_errors(result.as_bytes()), Ok(true));
    }

    #[test]
    fn a_damaged_status_is_started_afresh_and_a_failed_write_named() {
        use crate::host::memory::{MemoryDir, MemoryHost, MemorySystem};
        use crate::host::HostError;
        fn record(dir: &mut MemoryDir<'_>, phase: Phase, cloud: Option<Cloud>, end: Option<Option<&str>>, now: Option<u64>) -> Result<Failed, String> {
            super::record(dir, &MemorySystem::new(MemoryHost::new()), &mut [0; ROOM], phase, cloud, end, now)
        }
        let mut host = MemoryHost::new().with_file("/run/cloud-init/status.json", b"{not json");
        let mut dir = host.dir("/run/cloud-init");
        assert_eq!(record(&mut dir, Phase::Main, None, None, None), Ok(Failed::default()));
        let status = String::from_utf8(host.contents("/run/cloud-init/status.json").unwrap().to_vec()).unwrap();
        assert!(status.contains("\"stage\": \"modules-config\""), "{status}");
        host.fail.insert(b"/run/cloud-init/result.json".to_vec(), HostError { errno: 30 });
        let mut dir = host.dir("/run/cloud-init");
        assert_eq!(record(&mut dir, Phase::Final, None, Some(None), None).unwrap_err(), "cannot write result.json: errno 30");
    }
}
