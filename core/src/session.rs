//! What the actions of one run share beside the metadata: what failed so far
//! (`instance::Progress`), and the user-data and its cloud-config, each decoded once,
//! when an action first needs it, and kept for every later action of the run.
//!
//! A user-data that cannot be decoded is reported by the first action that applies it;
//! the later user-data actions of the run are then held back by it. The actions that run
//! from metadata too (the host name, the keys) take a cloud-config that does not parse
//! for none.

use crate::instance::Progress;

/// The run's shared state: `U` the decoded user-data, `C` its merged cloud-config, `T`
/// the host's reason one could not be had.
pub struct Shared<U, C, T> {
    /// What failed this boot, and so which actions may run.
    pub progress: Progress,
    userdata: Option<Result<Option<U>, T>>,
    config: Option<Result<C, T>>,
}

impl<U, C: Default, T: Copy> Shared<U, C, T> {
    pub const fn new(progress: Progress) -> Self {
        Shared { progress, userdata: None, config: None }
    }

    /// The decoded user-data (`None` when there is none), `decode`d the first time.
    /// `applies`: the caller applies it, so a user-data that does not decode holds back
    /// the later user-data actions.
    pub fn userdata(&mut self, applies: bool, decode: impl FnOnce() -> Result<Option<U>, T>) -> Result<Option<&U>, T> {
        let decoded = self.userdata.get_or_insert_with(decode);
        if applies && decoded.is_err() {
            self.progress.userdata_unusable();
        }
        match decoded {
            Ok(userdata) => Ok(userdata.as_ref()),
            Err(e) => Err(*e),
        }
    }

    /// The user-data just saved, decoded anew: what the later actions read.
    pub fn replace_userdata(&mut self, decoded: Result<Option<U>, T>) -> Result<Option<&U>, T> {
        match self.userdata.insert(decoded) {
            Ok(userdata) => Ok(userdata.as_ref()),
            Err(e) => Err(*e),
        }
    }

    /// The merged cloud-config, `parse`d once from the user-data (`decode`d as in
    /// `userdata`); `None` when the user-data has none, or it `is_empty`.
    pub fn cloud_config(
        &mut self,
        decode: impl FnOnce() -> Result<Option<U>, T>,
        parse: impl FnOnce(&U) -> Result<C, T>,
        is_empty: impl Fn(&C) -> bool,
    ) -> Result<Option<&C>, T> {
        if self.config.is_none() {
            let parsed = match self.userdata(false, decode) {
                Ok(Some(userdata)) => parse(userdata),
                Ok(None) => Ok(C::default()),
                Err(e) => Err(e),
            };
            self.config = Some(parsed);
        }
        match &self.config {
            Some(Ok(config)) if !is_empty(config) => Ok(Some(config)),
            Some(Err(e)) => Err(*e),
            _ => Ok(None),
        }
    }

    /// Why the user-data cannot be applied, reported by the first action that needs it:
    /// the later user-data actions of the run are then held back by it.
    pub fn report(&mut self, e: T) -> T {
        self.progress.userdata_unusable();
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phase::{Action, Phase};

    type Run = Shared<&'static str, Option<&'static str>, &'static str>;

    #[test]
    fn the_userdata_is_decoded_once_and_its_failure_holds_back_what_applies_it() {
        let mut shared = Run::new(Progress::default());
        let mut decodes = 0;
        for _ in 0..3 {
            assert_eq!(shared.userdata(false, || { decodes += 1; Ok(Some("#!/bin/sh")) }), Ok(Some(&"#!/bin/sh")));
        }
        assert_eq!(decodes, 1);
        let mut broken = Run::new(Progress::default());
        assert_eq!(broken.userdata(false, || Err("not gzip")), Err("not gzip"));
        // Only reading it holds nothing back; applying it does.
        assert_eq!(broken.progress, Progress::default());
        assert_eq!(broken.userdata(true, || Ok(None)), Err("not gzip"));
        let held = Phase::Final.plan(None, "").unwrap().into_iter().filter(|&a| a.needs_saved_userdata()).collect::<std::vec::Vec<Action>>();
        assert!(!held.is_empty());
        for action in held {
            assert!(broken.progress.may_run(action).is_err(), "{action:?}");
        }
    }

    #[test]
    fn the_cloud_config_is_parsed_once_and_an_empty_one_is_none() {
        let mut shared = Run::new(Progress::default());
        let mut parses = 0;
        for _ in 0..2 {
            let parsed = shared.cloud_config(|| Ok(Some("#cloud-config")), |_| { parses += 1; Ok(Some("hostname")) }, Option::is_none);
            assert_eq!(parsed, Ok(Some(&Some("hostname"))));
        }
        assert_eq!(parses, 1);
        // No user-data, or one with nothing in it: none.
        assert_eq!(Run::new(Progress::default()).cloud_config(|| Ok(None), |_| Ok(Some("x")), Option::is_none), Ok(None));
        assert_eq!(Run::new(Progress::default()).cloud_config(|| Ok(Some("")), |_| Ok(None), Option::is_none), Ok(None));
        // A failure to decode or parse is the cloud-config's, each time it is asked.
        let mut broken = Run::new(Progress::default());
        assert_eq!(broken.cloud_config(|| Ok(Some("x")), |_| Err("bad yaml"), Option::is_none), Err("bad yaml"));
        assert_eq!(broken.cloud_config(|| Ok(Some("x")), |_| Ok(None), Option::is_none), Err("bad yaml"));
        // Reported, it holds back the user-data actions.
        assert_eq!(broken.report("bad yaml"), "bad yaml");
        assert!(broken.progress.may_run(Action::RunUserdata).is_err());
    }

    #[test]
    fn the_saved_userdata_replaces_the_decoded_one() {
        let mut shared = Run::new(Progress::default());
        assert_eq!(shared.userdata(false, || Ok(None)), Ok(None));
        assert_eq!(shared.replace_userdata(Ok(Some("fetched"))), Ok(Some(&"fetched")));
        assert_eq!(shared.userdata(false, || Ok(None)), Ok(Some(&"fetched")));
    }
}
